# bash completion for tokenbroker                               -*- shell-script -*-
# Installed as share/bash-completion/completions/tokenbroker (loaded on demand by the
# bash-completion package); works without it too: `source` this file.
# Account names come from `tokenbroker accounts --names`, which reads only the config file
# (honouring a --config given on the command line), never the keyring.

_tokenbroker_account_keys="--issuer --client-auth --client-id --client-secret --device-client-id --device-client-secret
  --tenant --scopes --hosts --git-username --flow --login-hint --redirect-port --authority
  --authorization-endpoint --token-endpoint --device-authorization-endpoint --revocation-endpoint
  --userinfo-endpoint --ca-file --site --via --mode --cookie-lifetime --project --project-number
  --resource-manager-endpoint --kube-token --forward --mail --mail-scopes --api-endpoint"

_tokenbroker_accounts() {
    local tb=${COMP_WORDS[0]} i
    local -a cfg=()
    [[ $tb == */* && -x $tb ]] || tb=tokenbroker
    for ((i = 1; i < ${#COMP_WORDS[@]}; i++)); do
        case ${COMP_WORDS[i]} in
        --config) cfg=(--config "${COMP_WORDS[i + 1]}") ;;
        --config=*) cfg=("${COMP_WORDS[i]}") ;;
        esac
    done
    command "$tb" "${cfg[@]}" accounts --names 2>/dev/null
}

# COMPREPLY = the words of $1 (separated by spaces or newlines) that start with $2.
_tokenbroker_reply() {
    local IFS=$'\n'
    COMPREPLY=($(compgen -W "${1// /$'\n'}" -- "$2"))
}

_tokenbroker() {
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local cmd="" sub="" i nargs=0
    COMPREPLY=()
    # The command word, its subcommand and how many words follow it (options and the value
    # of --config do not count).
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
        --config | --format | --scope | --min-valid | --wait | --login-hint | --cookies-from | --provider | --url | --claims | \
            --for | --user | --host | --port | --imap | --smtp)
            ((i++)) ;;
        -*) ;;
        *)
            if [[ -z $cmd ]]; then cmd=${COMP_WORDS[i]}
            else
                [[ -z $sub ]] && sub=${COMP_WORDS[i]}
                ((nargs++))
            fi ;;
        esac
    done

    case $prev in
    --config | --cookies-from | --ca-file)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    --format) _tokenbroker_reply $'token\nheader\njson\nenv\ncookiejar\nexec-credential\nxoauth2\noauthbearer' "$cur"; return ;;
    --for) _tokenbroker_reply $'imap\npop\nsmtp' "$cur"; return ;;
    --provider) _tokenbroker_reply $'azure\ngoogle\nsharepoint\noidc\ngithub' "$cur"; return ;;
    --client-auth) _tokenbroker_reply $'client_secret_basic\nclient_secret_post\nnone' "$cur"; return ;;
    --flow) _tokenbroker_reply $'browser\ndevice-code' "$cur"; return ;;
    --mode) _tokenbroker_reply $'bearer\ncookie\nimported-cookies' "$cur"; return ;;
    --kube-token) _tokenbroker_reply $'access\nid' "$cur"; return ;;
    --forward) _tokenbroker_reply $'yes\nno' "$cur"; return ;;
    --tenant) _tokenbroker_reply $'common\norganizations\nconsumers' "$cur"; return ;;
    --via) _tokenbroker_reply "$(_tokenbroker_accounts)" "$cur"; return ;;
    --scope | --min-valid | --wait | --login-hint | --passphrase-fd | --url | --claims | --user | --host | --port | --imap | --smtp) return ;;
    esac

    if [[ -z $cmd ]]; then
        if [[ $cur == -* ]]; then _tokenbroker_reply "--config --verbose --help" "$cur"
        else _tokenbroker_reply "login logout revoke token accounts status account setup-git mail get store erase capability agent version unlock lock forward exec" "$cur"
        fi
        return
    fi
    local options="" accounts=0 words=""
    case $cmd in
    login) options="--scope --device-code --browser --no-open --login-hint --cookies-from"; ((nargs == 0)) && accounts=1 ;;
    logout) options="--all"; ((nargs == 0)) && accounts=1 ;;
    revoke) ((nargs == 0)) && accounts=1 ;;
    setup-git) options="--dry-run"; ((nargs == 0)) && accounts=1 ;;
    accounts) options="--json --names" ;;
    status) options="--url --json"; ((nargs == 0)) && accounts=1 ;;
    version | forward) options="--json" ;;
    unlock) options="--passphrase-fd --create" ;;
    exec)
        # After `--`: COMMAND and its arguments are completed as commands and files.
        for ((i = 2; i < COMP_CWORD; i++)); do
            if [[ ${COMP_WORDS[i]} == -- ]]; then
                compopt -o default 2>/dev/null
                ((i == COMP_CWORD - 1)) && COMPREPLY=($(compgen -c -- "$cur"))
                return
            fi
        done
        # After the first ACCOUNT: a second one, or `--` before COMMAND.
        ((nargs < 2)) && accounts=1
        ((nargs >= 1)) && words="--"
        options="--" ;;
    token)
        if [[ -z $sub ]]; then _tokenbroker_reply "get" "$cur"; return; fi
        options="--scope --for --min-valid --force-refresh --wait --claims --format --json --user --host --port"
        ((nargs == 1)) && accounts=1 ;;
    mail)
        if [[ -z $sub ]]; then _tokenbroker_reply "setup" "$cur"; return; fi
        options="--user --imap --smtp"
        ((nargs == 1)) && accounts=1
        ((nargs == 2)) && words="msmtp mbsync neomutt curl" ;;
    account)
        case $sub in
        "") _tokenbroker_reply $'add\nremove' "$cur"; return ;;
        remove) ((nargs == 1)) && accounts=1 ;;
        add)
            # Every other --KEY takes a value: offer nothing for it.
            if [[ $prev == --* && $prev != --replace && $prev != --help ]]; then return; fi
            options="--provider --replace $_tokenbroker_account_keys" ;;
        esac ;;
    agent)
        [[ -z $sub ]] && { _tokenbroker_reply $'run\nstart\nstop\nstatus' "$cur"; return; }
        [[ $sub == start || $sub == status ]] && options="--json" ;;
    esac
    if [[ $cur == -* ]]; then
        _tokenbroker_reply "$options --help" "$cur"
    elif ((accounts)) || [[ -n $words ]]; then
        _tokenbroker_reply "$( ((accounts)) && _tokenbroker_accounts; echo "$words")" "$cur"
    fi
}

complete -F _tokenbroker tokenbroker
