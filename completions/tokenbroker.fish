# fish completion for tokenbroker. Installed as share/fish/vendor_completions.d/tokenbroker.fish.
# Account names come from `tokenbroker accounts --names`, which reads only the config file
# (honouring a --config given on the command line), never the keyring.

# The words after `tokenbroker` that are not options (nor the value of an option that takes one).
function __tokenbroker_words
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for t in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        switch $t
            case --config --format --scope --min-valid --wait --login-hint --cookies-from --provider --url --claims \
                    --for --user --host --port --imap --smtp
                set skip 1
            case '-*'
            case '*'
                echo $t
        end
    end
end

# True when the words so far are exactly the arguments given.
function __tokenbroker_at
    set -l words (__tokenbroker_words)
    test (count $words) -eq (count $argv); or return 1
    test "$words" = "$argv"
end

# True when the first word (the command) is one of the arguments.
function __tokenbroker_in
    set -l words (__tokenbroker_words)
    contains -- "$words[1]" $argv
end

function __tokenbroker_accounts
    set -l tokens (commandline -opc)
    set -l cfg
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --config
                set -l next (math $i + 1)
                set -q tokens[$next]; and set cfg --config $tokens[$next]
            case '--config=*'
                set cfg $tokens[$i]
        end
    end
    command tokenbroker $cfg accounts --names 2>/dev/null
end

function __tokenbroker_wants_account
    set -l words (__tokenbroker_words)
    switch (count $words)
        case 1
            contains -- $words[1] login logout revoke setup-git exec status
        case 2
            test "$words" = "token get"; or test "$words" = "account remove"; or test "$words" = "mail setup"; or test $words[1] = exec
        case '*'
            return 1
    end
end

complete -c tokenbroker -f
complete -c tokenbroker -l config -r -F -d 'read only this config file'
complete -c tokenbroker -l verbose -d 'explain what happens'
complete -c tokenbroker -l help -d 'print usage'

complete -c tokenbroker -n '__tokenbroker_at' -a login -d 'sign in interactively'
complete -c tokenbroker -n '__tokenbroker_at' -a logout -d "delete the account's tokens"
complete -c tokenbroker -n '__tokenbroker_at' -a revoke -d 'revoke at the provider, then log out'
complete -c tokenbroker -n '__tokenbroker_at' -a token -d 'print a valid access token'
complete -c tokenbroker -n '__tokenbroker_at' -a accounts -d 'list accounts'
complete -c tokenbroker -n '__tokenbroker_at' -a status -d 'what is signed in; what serves a URL'
complete -c tokenbroker -n '__tokenbroker_at' -a account -d 'add or remove an account'
complete -c tokenbroker -n '__tokenbroker_at' -a setup-git -d "make git use tokenbroker for the hosts"
complete -c tokenbroker -n '__tokenbroker_at' -a mail -d "print a mail client's configuration"
complete -c tokenbroker -n '__tokenbroker_at' -a 'get store erase capability' -d 'git credential helper action'
complete -c tokenbroker -n '__tokenbroker_at' -a agent -d 'the resident agent'
complete -c tokenbroker -n '__tokenbroker_at' -a version -d 'versions of tokenbroker and its libraries'
complete -c tokenbroker -n '__tokenbroker_at' -a unlock -d 'encrypted-file: hand the store key to the agent'
complete -c tokenbroker -n '__tokenbroker_at' -a lock -d 'encrypted-file: the agent forgets the key'
complete -c tokenbroker -n '__tokenbroker_at' -a forward -d 'how to forward the agent to SSH hosts and containers'
complete -c tokenbroker -n '__tokenbroker_at' -a exec -d 'run a command with SDK credential endpoints'

complete -c tokenbroker -n '__tokenbroker_wants_account' -a '(__tokenbroker_accounts)' -d account
# exec ACCOUNT [ACCOUNT] -- COMMAND: `--` once an account is given, and until one is.
function __tokenbroker_exec_wants_dashes
    set -l words (__tokenbroker_words)
    test (count $words) -ge 2; and test $words[1] = exec; and test (count $words) -le 3; and not contains -- -- $words
end
complete -c tokenbroker -n '__tokenbroker_exec_wants_dashes' -a '(printf "%s\n" --)' -d 'then COMMAND'

complete -c tokenbroker -n '__tokenbroker_in login' -l scope -x -d 'ask for these scopes (step-up)'
complete -c tokenbroker -n '__tokenbroker_in login' -l device-code -d 'use the device code flow'
complete -c tokenbroker -n '__tokenbroker_in login' -l browser -d 'use the browser sign-in'
complete -c tokenbroker -n '__tokenbroker_in login' -l no-open -d 'print the URL, open no browser'
complete -c tokenbroker -n '__tokenbroker_in login' -l login-hint -x -d 'user name suggested at sign-in'
complete -c tokenbroker -n '__tokenbroker_in login' -l cookies-from -r -F -d 'SharePoint cookies from a file'
complete -c tokenbroker -n '__tokenbroker_in logout' -l all -d 'sign out of every account'

complete -c tokenbroker -n '__tokenbroker_at token' -a get -d 'print a valid access token'
complete -c tokenbroker -n '__tokenbroker_in token' -l scope -x -d 'request these scopes'
complete -c tokenbroker -n '__tokenbroker_in token' -l min-valid -x -d 'seconds the token must stay valid'
complete -c tokenbroker -n '__tokenbroker_in token' -l wait -x -d 'seconds to wait for a sign-in'
complete -c tokenbroker -n '__tokenbroker_in token' -l force-refresh -d 'refresh even if still valid'
complete -c tokenbroker -n '__tokenbroker_in token' -l claims -x -d 'claims of an insufficient_claims challenge'
complete -c tokenbroker -n '__tokenbroker_in token' -l format -x -a 'token header json env cookiejar exec-credential xoauth2 oauthbearer' -d 'output format'
complete -c tokenbroker -n '__tokenbroker_in token' -l for -x -a 'imap pop smtp' -d 'a mail token for this protocol'
complete -c tokenbroker -n '__tokenbroker_in token' -l user -x -d 'the SASL user name (xoauth2, oauthbearer)'
complete -c tokenbroker -n '__tokenbroker_in token' -l host -x -d 'the mail server (oauthbearer)'
complete -c tokenbroker -n '__tokenbroker_in token' -l port -x -d "the mail server's port (oauthbearer)"
complete -c tokenbroker -n '__tokenbroker_in token version accounts status forward' -l json -d 'print JSON'
complete -c tokenbroker -n '__tokenbroker_in status' -l url -x -d 'which rule, account and helpers serve this URL'
complete -c tokenbroker -n '__tokenbroker_in accounts' -l names -d 'print only the account names'

complete -c tokenbroker -n '__tokenbroker_at account' -a 'add remove' -d 'edit the config file'
# True when the words so far start with `account add`.
function __tokenbroker_in_add
    set -l words (__tokenbroker_words)
    test "$words[1]" = account; and test "$words[2]" = add
end
complete -c tokenbroker -n '__tokenbroker_in_add' -l provider -x -a 'azure google sharepoint oidc github' -d 'identity provider'
complete -c tokenbroker -n '__tokenbroker_in_add' -l replace -d 'overwrite an existing account'
for key in issuer client-id client-secret device-client-id device-client-secret scopes hosts git-username \
        login-hint redirect-port authority authorization-endpoint token-endpoint \
        device-authorization-endpoint revocation-endpoint userinfo-endpoint site cookie-lifetime project \
        project-number resource-manager-endpoint mail-scopes api-endpoint
    complete -c tokenbroker -n '__tokenbroker_in_add' -l $key -x -d 'account key'
end
complete -c tokenbroker -n '__tokenbroker_in_add' -l client-auth -x -a 'client_secret_basic client_secret_post none' -d 'client authentication'
complete -c tokenbroker -n '__tokenbroker_in_add' -l tenant -x -a 'common organizations consumers' -d 'Azure tenant'
complete -c tokenbroker -n '__tokenbroker_in_add' -l flow -x -a 'browser device-code' -d 'sign-in flow'
complete -c tokenbroker -n '__tokenbroker_in_add' -l mode -x -a 'bearer cookie imported-cookies' -d 'SharePoint mode'
complete -c tokenbroker -n '__tokenbroker_in_add' -l kube-token -x -a 'access id' -d 'token exec-credential hands kubectl (oidc)'
complete -c tokenbroker -n '__tokenbroker_in_add' -l forward -x -a 'yes no' -d 'serve this account on the forwarding socket'
complete -c tokenbroker -n '__tokenbroker_in_add' -l mail -x -a 'imap pop smtp' -d 'mail protocols whose consent login asks'
complete -c tokenbroker -n '__tokenbroker_in_add' -l via -x -a '(__tokenbroker_accounts)' -d 'azure account (SharePoint)'
complete -c tokenbroker -n '__tokenbroker_in_add' -l ca-file -r -F -d 'extra PEM bundle'

complete -c tokenbroker -n '__tokenbroker_in unlock' -l passphrase-fd -x -d 'read the passphrase from this descriptor'
complete -c tokenbroker -n '__tokenbroker_in unlock' -l create -d 'create the store when there is none (needed with --passphrase-fd)'
complete -c tokenbroker -n '__tokenbroker_in setup-git' -l dry-run -d 'print the git config commands only'

complete -c tokenbroker -n '__tokenbroker_at mail' -a setup -d "print a mail client's configuration"
# True right after `mail setup ACCOUNT`: the client comes next.
function __tokenbroker_wants_mail_client
    set -l words (__tokenbroker_words)
    test (count $words) -eq 3; and test "$words[1] $words[2]" = "mail setup"
end
complete -c tokenbroker -n '__tokenbroker_wants_mail_client' -a 'msmtp mbsync neomutt curl' -d 'mail client'
complete -c tokenbroker -n '__tokenbroker_in mail' -l user -x -d "the mailbox's address"
complete -c tokenbroker -n '__tokenbroker_in mail' -l imap -x -d 'the IMAP server, HOST[:PORT]'
complete -c tokenbroker -n '__tokenbroker_in mail' -l smtp -x -d 'the SMTP server, HOST[:PORT]'
complete -c tokenbroker -n '__tokenbroker_at agent' -a 'run start stop status' -d 'agent action'
complete -c tokenbroker -n '__tokenbroker_at agent start; or __tokenbroker_at agent status' -l json -d 'print JSON'
