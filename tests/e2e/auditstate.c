/* auditstate: prints whether the kernel's audit is enabled (0, 1 or 2), or sets it:
 *   auditstate          print
 *   auditstate set N    set enabled to N (0 or 1)
 * For tests/run.sh, which switches audit on for the suite (--enable-kernel-audit) and puts it
 * back as it found it afterwards. Needs CAP_AUDIT_CONTROL (root). */
#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

static int request(int fd, int type, const void *body, size_t len, struct audit_status *reply)
{
        struct {
                struct nlmsghdr h;
                char body[sizeof(struct audit_status)];
        } req;
        memset(&req, 0, sizeof(req));
        req.h.nlmsg_len = NLMSG_LENGTH(len);
        req.h.nlmsg_type = (unsigned short)type;
        req.h.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        req.h.nlmsg_seq = 1;
        memcpy(req.body, body, len);
        struct sockaddr_nl k = { .nl_family = AF_NETLINK };
        if (sendto(fd, &req, req.h.nlmsg_len, 0, (struct sockaddr *)&k, sizeof(k)) < 0)
                return -errno;
        for (int i = 0; i < 4; i++) {
                char buf[8192];
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n < 0)
                        return -errno;
                for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                int e = ((struct nlmsgerr *)NLMSG_DATA(h))->error;
                                if (e < 0 || !reply)
                                        return e;
                        } else if (h->nlmsg_type == AUDIT_GET && reply) {
                                memcpy(reply, NLMSG_DATA(h), sizeof(*reply));
                                return 0;
                        }
                }
        }
        return -EIO;
}

int main(int argc, char **argv)
{
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
        if (fd < 0) {
                perror("auditstate: netlink");
                return 1;
        }
        struct timeval tv = { .tv_sec = 2 };
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        if (argc == 3 && strcmp(argv[1], "set") == 0 && (strcmp(argv[2], "0") == 0 || strcmp(argv[2], "1") == 0)) {
                struct audit_status st = { .mask = AUDIT_STATUS_ENABLED, .enabled = (unsigned)atoi(argv[2]) };
                int r = request(fd, AUDIT_SET, &st, sizeof(st), NULL);
                if (r < 0) {
                        fprintf(stderr, "auditstate: set: %s\n", strerror(-r));
                        return 1;
                }
                return 0;
        }
        if (argc != 1) {
                fprintf(stderr, "usage: auditstate [set 0|1]\n");
                return 2;
        }
        struct audit_status st;
        int r = request(fd, AUDIT_GET, NULL, 0, &st);
        if (r < 0) {
                fprintf(stderr, "auditstate: %s\n", strerror(-r));
                return 1;
        }
        printf("%u\n", st.enabled);
        return 0;
}
