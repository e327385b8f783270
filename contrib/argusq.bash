# bash completion for argusq(1) -- commands, options, statement keywords
# and the trace names of the archive.
#
# Installed by `make install` as
# $(PREFIX)/share/bash-completion/completions/argusq; or source it:
#     . contrib/argusq.bash
#
# Trace names come from `argusq -d ARCHIVE --list-traces` (one a line),
# with ARCHIVE from -d/--db on the command line, else $ARGUSQ_DB, else
# ./argus.db.  After `trace` inside a statement they are offered quoted
# (\"NAME\"), as the query language wants a string there.

_argusq_archive()
{
    local i
    for ((i = 1; i < ${#COMP_WORDS[@]} - 1; i++)); do
        case ${COMP_WORDS[i]} in
        -d | --db)
            printf '%s\n' "${COMP_WORDS[i + 1]}"
            return
            ;;
        esac
    done
    printf '%s\n' "${ARGUSQ_DB:-argus.db}"
}

_argusq_traces()
{
    local bin=${COMP_WORDS[0]:-argusq} db
    db=$(_argusq_archive)
    db=${db/#\~/$HOME}
    "$bin" -d "$db" --list-traces 2>/dev/null
}

_argusq()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=""
    ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
    COMPREPLY=()

    local opts="-d --db --trace --json --format -f --name --rules --label --help --version"
    local record_opts="-o --output --max-mb --events --watch --help --"
    local formats="table json csv dot svg perfetto"
    local statements="traces use help find show events slice rule rules drop rename label rebuild match compare
        diagnose check transaction export critical"
    local keywords="nodes events edges where order by asc desc limit in trace from node back forward
        depth via with weak against thread after fix of to path boundary connect ignore wakeup graph archive traces
        and or not begin end send recv path group compute set unset between"
    local kinds="wakeup weak ipc ipc_reply dispatch runloop timer flag user preempt io"

    # what the word before asks for
    case $prev in
    -d | --db | -f | --rules | -o | --output)
        COMPREPLY=($(compgen -f -- "$cur"))
        return
        ;;
    --format)
        COMPREPLY=($(compgen -W "$formats" -- "$cur"))
        return
        ;;
    --trace)
        local IFS=$'\n'
        COMPREPLY=($(compgen -W "$(_argusq_traces)" -- "$cur"))
        return
        ;;
    --events)
        COMPREPLY=($(compgen -W "default sched irq timer workqueue raw_syscalls" -- "$cur"))
        return
        ;;
    --name | --max-mb | --watch)
        return
        ;;
    trace)
        # in a statement: `in trace "NAME"`, `use trace "NAME"`, ...
        # (not through compgen -W, whose expansion would remove the quotes)
        local t
        while IFS= read -r t; do
            t="\\\"$t\\\"" # \"NAME\" on the command line
            [[ $t == "$cur"* ]] && COMPREPLY+=("$t")
        done < <(_argusq_traces)
        return
        ;;
    via | ,)
        COMPREPLY=($(compgen -W "$kinds" -- "$cur"))
        return
        ;;
    help)
        COMPREPLY=($(compgen -W "$statements" -- "$cur"))
        return
        ;;
    esac

    # the command or statement so far (options and their values skipped)
    local i w cmd="" nwords=0 dashdash=0
    for ((i = 1; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
        -d | --db | --trace | --format | -f | --name | --rules | -o | --output | --max-mb | --events | --watch)
            ((i++))
            ;;
        --)
            dashdash=1
            ;;
        -*) ;;
        *)
            [[ -z $cmd ]] && cmd=$w
            ((nwords++))
            ;;
        esac
    done

    if [[ $cmd == record && $dashdash == 1 ]]; then
        # the command to record, then its arguments
        if [[ ${COMP_WORDS[COMP_CWORD - 1]} == -- ]]; then
            COMPREPLY=($(compgen -c -- "$cur"))
        else
            COMPREPLY=($(compgen -f -- "$cur"))
        fi
        return
    fi
    if [[ $cur == -* ]]; then
        case $cmd in
        record) COMPREPLY=($(compgen -W "$record_opts" -- "$cur")) ;;
        ingest) COMPREPLY=($(compgen -W "-d --db --name --rules --arch --label --json" -- "$cur")) ;;
        dump) COMPREPLY=($(compgen -W "-d --db --trace -o --output --json" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "$opts" -- "$cur")) ;;
        esac
        return
    fi
    case $cmd in
    "")
        COMPREPLY=($(compgen -W "ingest record info compact backup dump $statements" -- "$cur"))
        ;;
    ingest | backup)
        ((nwords == 1)) && COMPREPLY=($(compgen -f -- "$cur"))
        ;;
    info | compact | dump) ;;
    record) ;;
    *)
        # statement words: `argusq find nodes where ...` is `argusq 'find nodes where ...'`
        COMPREPLY=($(compgen -W "$keywords $statements" -- "$cur"))
        ;;
    esac
}

complete -o bashdefault -o default -F _argusq argusq
