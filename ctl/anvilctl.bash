# ctl/: bash completion for anvilctl, run by any user's interactive shell; `make install` puts
# it at $(PREFIX)/share/bash-completion/completions/anvilctl, where bash-completion loads it
# when `anvilctl` is first completed. The commands' options and the capability names are read
# from anvilctl's own help (`anvilctl COMMAND --help`), so that they are written once, in
# ctl/main.c, and a completion never offers what anvilctl does not take.

# _anvilctl_help WORD0 COMMAND...: that help, on stdout ("" if anvilctl is not there)
_anvilctl_help() {
        "$1" "${@:2}" --help 2>/dev/null
}

_anvilctl() {
        local cur prev cmd i w0
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        w0=${COMP_WORDS[0]}
        cmd=""
        for ((i = 1; i < COMP_CWORD; i++)); do
                case ${COMP_WORDS[i]} in
                -*) ;;
                *)
                        cmd=${COMP_WORDS[i]}
                        break
                        ;;
                esac
        done
        COMPREPLY=()
        if [ -z "$cmd" ]; then
                # The commands are the first words of the help's "Commands:" lines.
                local cmds
                cmds=$(_anvilctl_help "$w0" | sed -n '/^Commands:/,/^$/s/^  \([a-z]\+\) .*/\1/p')
                if [[ $cur == -* ]]; then
                        COMPREPLY=($(compgen -W "$(_anvilctl_help "$w0" | sed -nE 's/^  (-[a-z], )?(--[a-z][a-z-]*).*/\2/p')" -- "$cur"))
                else
                        COMPREPLY=($(compgen -W "$cmds" -- "$cur"))
                fi
                return 0
        fi
        case $prev in
        --input)
                COMPREPLY=($(compgen -f -- "$cur"))
                return 0
                ;;
        --variables)
                COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur"))
                return 0
                ;;
        --cap)
                # The help's "Today:" list, one capability a line: "    NAME: what the server does".
                COMPREPLY=($(compgen -W "$(_anvilctl_help "$w0" run | sed -nE 's/^ {24}([a-z_]+): .*/\1/p')" -- "$cur"))
                return 0
                ;;
        --output | -o)
                COMPREPLY=($(compgen -d -- "$cur"))
                return 0
                ;;
        --timeout | --cpu | --memory)
                return 0 # a number: nothing to offer
                ;;
        esac
        if [ "$cmd" = help ]; then
                COMPREPLY=($(compgen -W "$(_anvilctl_help "$w0" | sed -n '/^Commands:/,/^$/s/^  \([a-z]\+\) .*/\1/p')" -- "$cur"))
                return 0
        fi
        if [[ $cur == -* ]]; then
                COMPREPLY=($(compgen -W "$(_anvilctl_help "$w0" "$cmd" | sed -nE 's/^  (-[a-z], )?(--[a-z][a-z-]*).*/\2/p')" -- "$cur"))
                return 0
        fi
        case $cmd in
        run) COMPREPLY=($(compgen -f -X '!*.py' -- "$cur") $(compgen -d -- "$cur")) ;;
        submit) COMPREPLY=($(compgen -f -X '!*.json' -- "$cur") $(compgen -d -- "$cur")) ;;
        esac
        return 0
}
complete -o filenames -F _anvilctl anvilctl
