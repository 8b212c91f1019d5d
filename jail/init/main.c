/* anvil-init: the jail's pid 1 (jail/pid1.c). Linked statically, from libc alone. */
#include "jail/jail.h"

int main(int argc, char **argv)
{
        return jail_pid1_main(argc, argv, jail_relay_main);
}
