# Print an optspec for argparse to handle cmd's options that are independent of any subcommand.
function __fish_redlock_global_optspecs
    string join \n s/server= prefix= timeout= username= password-file= tls-ca= tls-cert= tls-key= tls-insecure v/verbose q/quiet log-format= h/help V/version
end

function __fish_redlock_needs_command
    # Figure out if the current invocation already has a command.
    set -l cmd (commandline -opc)
    set -e cmd[1]
    argparse -s (__fish_redlock_global_optspecs) -- $cmd 2>/dev/null
    or return
    if set -q argv[1]
        # Also print the command, so this can be used to figure out what it is.
        echo $argv[1]
        return 1
    end
    return 0
end

function __fish_redlock_using_subcommand
    set -l cmd (__fish_redlock_needs_command)
    test -z "$cmd"
    and return 1
    contains -- $cmd[1] $argv
end

complete -c redlock -n "__fish_redlock_needs_command" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_needs_command" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_needs_command" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_needs_command" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_needs_command" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_needs_command" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_needs_command" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_needs_command" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_needs_command" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_needs_command" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "acquire" -d 'Take the lock once (or keep trying for --wait) and print its token'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "release" -d 'Release a lock held by TOKEN (compare-and-delete on every server)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "extend" -d 'Give a lock held by TOKEN a fresh TTL; print the new validity'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "status" -d 'Show who holds a lock, server by server, or list every lock'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "history" -d 'Show a lock\'s recent runs: which host, when, how long, how it ended'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "exec" -d 'Hold the lock while COMMAND runs; stop COMMAND if the lock is lost'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "latch" -d 'A countdown latch: wait until N jobs on other hosts are done'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "doctor" -d 'Check the servers against what Redlock needs'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "generate" -d 'Write shell completions, man pages or docs/json.md (for packagers and tests)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l ttl -d 'How long the lock lives (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s w -l wait -d 'Keep trying up to DUR while the lock is busy' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s E -l conflict-exit-code -d 'Exit status when the lock is busy (default 75)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l retry-delay -d 'Mean pause between attempts while waiting (randomised ±50%)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l limit -d 'A semaphore: up to N holders of NAME at once (1 to 1000)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l fence -d 'Also get a fencing number for the resource to check'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l shared -d 'Take NAME shared, as flock -s does'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l json -d 'Print one JSON object instead of the token'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand release" -l token -d 'The token `acquire` printed' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l limit -d 'NAME is a semaphore: release the slot TOKEN holds' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l hold-at-least -d 'Keep the lock until DUR after its acquisition' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l history -d 'Runs kept in NAME\'s history (0: record none)' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l history-retention -d 'NAME\'s history goes once no run has been recorded for DUR (at most 1y)' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand release" -l force -d 'Delete the lock whatever its token (a stuck lock)'
complete -c redlock -n "__fish_redlock_using_subcommand release" -l shared -d 'TOKEN is a shared holder\'s (acquire --shared)'
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l token -d 'The token `acquire` printed' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l ttl -d 'The new TTL, counted from now (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l limit -d 'NAME is a semaphore: extend the slot TOKEN holds' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l json -d 'Print one JSON object instead of the validity'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l shared -d 'TOKEN is a shared holder\'s (acquire --shared)'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l limit -d 'NAME is a semaphore of N slots: show each slot\'s holder' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l watch -d 'Watch it every DUR (default 2s) until Ctrl-C' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand status" -l json -d 'Print one JSON object for programs'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l shared -d 'Changes nothing: status always shows the mode'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l scan -d 'Walk every key of every server, however many it holds'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s n -l last -d 'Show the N newest runs only' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l since -d 'Show only the runs that ended in the last DUR' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand history" -l json -d 'Print one JSON object for programs'
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l ttl -d 'How long the lock lives (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s w -l wait -d 'Keep trying up to DUR while the lock is busy' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s E -l conflict-exit-code -d 'Exit status when the lock is busy (default 75)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l retry-delay -d 'Mean pause between attempts while waiting (randomised ±50%)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l limit -d 'A semaphore: up to N holders of NAME at once (1 to 1000)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l kill-after -d 'After SIGTERM to a command that must stop, wait this long (at most 1h) before SIGKILL' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l hold-at-least -d 'Keep the lock until DUR after it was taken' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l max-runtime -d 'Stop the command after DUR and exit 124' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l history -d 'Runs kept in NAME\'s history (0: record none)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l history-retention -d 'NAME\'s history goes once no run has been recorded for DUR (at most 1y)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l fence -d 'Also get a fencing number for the resource to check'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l shared -d 'Take NAME shared, as flock -s does'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "set" -d 'Create latch NAME, to open once COUNT ids have counted down'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "done" -d 'Count down once for --id'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "wait" -d 'Wait until the latch opens (exit 0), or give up (75)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "status" -d 'Show who counted down, and what is missing; or list every latch'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l count -d 'Ids that must count down before it opens (1 to 1000)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l ttl -d 'Lifetime of a latch this creates (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l json -d 'Print one JSON object (the latch\'s state, and `created`)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l id -d 'What this count-down is for: one id per job' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l count -d 'Create the latch with N if it does not exist' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l ttl -d 'Lifetime of a latch this creates (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l json -d 'Print one JSON object for programs'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s w -l wait -d 'Give up (exit 75) after DUR; 0s looks once' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l count -d 'Create the latch with N if it does not exist' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l ttl -d 'Lifetime of a latch this creates (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l json -d 'Print one JSON object, open or not'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l json -d 'Print JSON for programs'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l scan -d 'Walk every key of every server, however many it holds'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "set" -d 'Create latch NAME, to open once COUNT ids have counted down'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "done" -d 'Count down once for --id'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "wait" -d 'Wait until the latch opens (exit 0), or give up (75)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show who counted down, and what is missing; or list every latch'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l ttl -d 'The longest TTL your locks use (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l read-as -d 'Read each server\'s configuration (INFO, CONFIG GET) as USER' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l strict -d 'Treat every warning as an error (exit 1)'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l json -d 'Print one JSON object for programs'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s v -l verbose -d 'Also each finding\'s cause in the server\'s or the library\'s own words'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s q -l quiet -d 'Changes nothing: the report is always whole'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s s -l server -d 'Redis server URL; repeat for each server' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l prefix -d 'Prefix of the Redis key' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l timeout -d 'Budget per server and step' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l log-format -d 'Stderr lines as text or json' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s v -l verbose -d 'Print each server\'s answer and latency'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s q -l quiet -d 'Print errors only'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "acquire" -d 'Take the lock once (or keep trying for --wait) and print its token'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "release" -d 'Release a lock held by TOKEN (compare-and-delete on every server)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "extend" -d 'Give a lock held by TOKEN a fresh TTL; print the new validity'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "status" -d 'Show who holds a lock, server by server, or list every lock'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "history" -d 'Show a lock\'s recent runs: which host, when, how long, how it ended'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "exec" -d 'Hold the lock while COMMAND runs; stop COMMAND if the lock is lost'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "latch" -d 'A countdown latch: wait until N jobs on other hosts are done'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "doctor" -d 'Check the servers against what Redlock needs'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "generate" -d 'Write shell completions, man pages or docs/json.md (for packagers and tests)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "set" -d 'Create latch NAME, to open once COUNT ids have counted down'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "done" -d 'Count down once for --id'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "wait" -d 'Wait until the latch opens (exit 0), or give up (75)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "status" -d 'Show who counted down, and what is missing; or list every latch'
