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

complete -c redlock -n "__fish_redlock_needs_command" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_needs_command" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_needs_command" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_needs_command" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_needs_command" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_needs_command" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_needs_command" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_needs_command" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_needs_command" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_needs_command" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_needs_command" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "acquire" -d 'Take the lock once (or keep trying for --wait) and print its token'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "release" -d 'Release a lock held by TOKEN (compare-and-delete on every server)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "extend" -d 'Give a lock held by TOKEN a fresh TTL and print the new validity in milliseconds'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "status" -d 'Show who holds a lock on each server, or list every lock under the prefix'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "history" -d 'Show the recent runs of a lock: which host ran each, when, for how long, and how it ended'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "exec" -d 'Hold the lock while COMMAND runs: renew it, and stop COMMAND if the lock is lost'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "latch" -d 'A countdown latch: wait until N jobs on other hosts are done (set, done, wait, status)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "doctor" -d 'Check the servers against what Redlock needs (independent masters, persistence, no eviction, ACL)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "generate" -d 'Write shell completions or man pages (for packagers)'
complete -c redlock -n "__fish_redlock_needs_command" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l ttl -d 'How long the lock lives on the servers unless extended or released (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s w -l wait -d 'Keep trying for up to DUR (at most 7d) while the lock is busy or unreachable (default: try once)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s E -l conflict-exit-code -d 'Exit status when the lock is busy (default 75)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l retry-delay -d 'Mean pause between attempts while waiting (randomised ±50%)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l limit -d 'Treat NAME as a semaphore of N slots (1 to 1000): up to N holders at once, each in a slot of its own (exec\'s command sees REDLOCK_SLOT, 0 to N-1). The servers remember N while it has holders: another N exits 64. The mutex NAME is a different lock' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l fence -d 'Also get a fencing number, greater than that of every earlier grant of NAME, for the protected resource to check (exec\'s command sees REDLOCK_FENCE; acquire prints it on a second line, or as "fence" with --json). Costs one more round'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l shared -d 'Take NAME shared, as flock -s does: any number of shared holders at once, none while an exclusive holder has it, and none who arrive after an exclusive waiter (exec\'s command sees REDLOCK_SHARED=1). Not with --limit; with --fence, the current fence is read and no new one is taken'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l json -d 'Print one JSON object instead of the token: version, name, key, token, ttl_ms, validity_ms, servers, votes, and fence and slot with --fence and --limit (docs/json.md)'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand acquire" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand release" -l token -d 'The token `acquire` printed' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l limit -d 'NAME is a semaphore of N slots: release the slot TOKEN holds (with --force: every slot). Without it, a token that holds no lock NAME releases its slot of the semaphore NAME' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l hold-at-least -d 'Keep the lock until DUR (at most 7d) after its acquisition instead of deleting it: the key then expires on its own. The acquisition time is the one in the token, from the acquiring host\'s wall clock; each server counts DUR from it on its own clock, never past DUR from now (this host\'s clock plays no part). Released at once if DUR has passed' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l history -d 'Record the run in NAME\'s history (`redlock history`), which keeps the N newest runs on each server (0: record nothing)' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l history-retention -d 'NAME\'s history goes once no run has been recorded for DUR (at most 1y)' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand release" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand release" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand release" -l force -d 'Delete the lock whatever its token (for a stuck lock); prints what it removed, exits 1 if there was nothing. Deliberately has no environment variable: it must be typed each time'
complete -c redlock -n "__fish_redlock_using_subcommand release" -l shared -d 'TOKEN is a shared holder\'s (`acquire --shared`): it leaves the shared holders, and the last one to leave frees the lock'
complete -c redlock -n "__fish_redlock_using_subcommand release" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand release" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l token -d 'The token `acquire` printed' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l ttl -d 'The new TTL, counted from now (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l limit -d 'NAME is a semaphore of N slots: extend the slot TOKEN holds. Without it, a token that holds no lock NAME extends its slot of the semaphore NAME' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l json -d 'Print one JSON object instead of the validity: version, name, key, token, ttl_ms, validity_ms, servers, votes (docs/json.md)'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l shared -d 'TOKEN is a shared holder\'s (`acquire --shared`)'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand extend" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l limit -d 'NAME is a semaphore of N slots: show each slot\'s holder and TTL. Without it, a name that is a semaphore is shown as one (and beside the lock NAME, when both are held)' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l watch -d 'Keep watching over the same connections, every DUR (default 2s), until interrupted (exit 0 on Ctrl-C): the table redrawn in place on a terminal, else one table (or with --json one document) per refresh. Deliberately has no environment variable: an exported one would make every status in a script run forever' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand status" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand status" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand status" -l json -d 'Print one JSON object for programs (its fields: docs/json.md)'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l shared -d 'Accepted so that one set of options fits every subcommand: status always shows whether NAME is held exclusively or shared, and by whom'
complete -c redlock -n "__fish_redlock_using_subcommand status" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand status" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s n -l last -d 'Show the N newest runs only' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l since -d 'Show only the runs that ended within DUR before now (e.g. 24h)' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand history" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand history" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand history" -l json -d 'Print one JSON object for programs (its fields: docs/json.md)'
complete -c redlock -n "__fish_redlock_using_subcommand history" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand history" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l ttl -d 'How long the lock lives on the servers unless extended or released (at most 7d)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s w -l wait -d 'Keep trying for up to DUR (at most 7d) while the lock is busy or unreachable (default: try once)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s E -l conflict-exit-code -d 'Exit status when the lock is busy (default 75)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l retry-delay -d 'Mean pause between attempts while waiting (randomised ±50%)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l limit -d 'Treat NAME as a semaphore of N slots (1 to 1000): up to N holders at once, each in a slot of its own (exec\'s command sees REDLOCK_SLOT, 0 to N-1). The servers remember N while it has holders: another N exits 64. The mutex NAME is a different lock' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l kill-after -d 'After SIGTERM to a command that must stop, wait this long (at most 1h) before SIGKILL' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l hold-at-least -d 'When the command ends, keep the lock until DUR (at most 7d) after it was acquired instead of releasing it, so hosts whose start is up to DUR later find it busy. For cron across a fleet: size it to the spread of the hosts\' start times and clocks' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l max-runtime -d 'Stop a command still running after DUR (at most 7d) as a lost lock stops it (SIGTERM to its process group, SIGKILL after --kill-after) and exit 124, as timeout(1) does' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l history -d 'Record the run in NAME\'s history (`redlock history`), which keeps the N newest runs on each server (0: record nothing)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l history-retention -d 'NAME\'s history goes once no run has been recorded for DUR (at most 1y)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l fence -d 'Also get a fencing number, greater than that of every earlier grant of NAME, for the protected resource to check (exec\'s command sees REDLOCK_FENCE; acquire prints it on a second line, or as "fence" with --json). Costs one more round'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l shared -d 'Take NAME shared, as flock -s does: any number of shared holders at once, none while an exclusive holder has it, and none who arrive after an exclusive waiter (exec\'s command sees REDLOCK_SHARED=1). Not with --limit; with --fence, the current fence is read and no new one is taken'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand exec" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "set" -d 'Create latch NAME, to open once COUNT distinct ids have counted down; exit 0 if it exists with the same count (so every host can run it), 75 if with another'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "done" -d 'Count down once for --id: exit 0 once it is recorded (id, when, by whom) on a quorum'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "wait" -d 'Wait until the latch opens (exit 0), or give up after --wait or when it expires (75), or when too few servers answer to tell (69)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "status" -d 'Show who counted down, when, and what is missing; without NAME, list every latch'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and not __fish_seen_subcommand_from set done wait status help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l count -d 'How many distinct ids must count down before it opens (1 to 1000)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l ttl -d 'How long a latch this creates lives on the servers (at most 7d); an existing latch keeps its own. Give it room for the slowest job and the wait, and name the latch for the run (nightly-etl-2025-01-07) rather than reusing a name before it expires' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l json -d 'Print one JSON object (the latch\'s state, and `created`)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from set" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l id -d 'What this count-down is for: one id per job (a host, a shard). An id counts once, so a retried job may run `done` again. Without it, a fresh id: a retry then counts twice' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l count -d 'Create the latch with N if it does not exist (as `set` does; exit 75 if it exists with another count). Without it, a latch that no server knows is an error (64)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l ttl -d 'How long a latch this creates lives on the servers (at most 7d); an existing latch keeps its own. Give it room for the slowest job and the wait, and name the latch for the run (nightly-etl-2025-01-07) rather than reusing a name before it expires' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l json -d 'Print one JSON object (the latch\'s state, and `id`, `votes`, `repaired`)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from done" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s w -l wait -d 'Give up (exit 75) after DUR (at most 7d); 0s looks once (default: until it opens or expires)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l count -d 'Create the latch with N if it does not exist (as `set` does; exit 75 if it exists with another count), so the waiter may start first. Without it, a latch that no server knows is an error (64)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l ttl -d 'How long a latch this creates lives on the servers (at most 7d); an existing latch keeps its own. Give it room for the slowest job and the wait, and name the latch for the run (nightly-etl-2025-01-07) rather than reusing a name before it expires' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l json -d 'Print one JSON object (the latch\'s state, and `waited_ms`, `expired`), open or not'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from wait" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l json -d 'Print JSON for programs'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from status" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "set" -d 'Create latch NAME, to open once COUNT distinct ids have counted down; exit 0 if it exists with the same count (so every host can run it), 75 if with another'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "done" -d 'Count down once for --id: exit 0 once it is recorded (id, when, by whom) on a quorum'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "wait" -d 'Wait until the latch opens (exit 0), or give up after --wait or when it expires (75), or when too few servers answer to tell (69)'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "status" -d 'Show who counted down, when, and what is missing; without NAME, list every latch'
complete -c redlock -n "__fish_redlock_using_subcommand latch; and __fish_seen_subcommand_from help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l ttl -d 'The longest TTL your locks use (at most 7d): a server without persistence that started less than this ago may have forgotten locks it granted, and a clock offset is allowed the drift allowance of this TTL' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l strict -d 'Treat every warning as an error (exit 1): for a CI or deploy preflight'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l json -d 'Print one JSON object for programs: every server\'s facts and every finding (docs/json.md)'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s h -l help -d 'Print help'
complete -c redlock -n "__fish_redlock_using_subcommand doctor" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s s -l server -d 'Redis server URL; repeat for each server (or separate them with commas): redis://[user[:password]@]host[:port][/db], rediss://… for TLS, unix:///path/redis.sock, a Sentinel group as redis+sentinel://host1,host2,host3/MASTER_NAME (a /db, ports and credentials as in redis://), or a Redis Cluster as redis+cluster://host1,host2 (its nodes as seeds; one vote). Quorum is a majority of the distinct servers' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l prefix -d 'Prefix of the Redis key: lock NAME is the key <PREFIX><NAME>' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l timeout -d 'Budget per server for connecting and answering (at most 60s); one slow or dead server costs this, no more (a Sentinel group\'s first round: twice, for its sentinels, then its master)' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l username -d 'ACL username for servers whose URL names none' -r
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l password-file -d 'Read the password for servers whose URL has none from FILE (safer than a URL in argv); REDLOCK_PASSWORD in the environment works too. Sentinels take REDLOCK_SENTINEL_USERNAME and REDLOCK_SENTINEL_PASSWORD from the environment' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-ca -d 'Trust only the CA certificates in FILE (PEM) for rediss:// servers, instead of the system\'s' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-cert -d 'Client certificate (PEM) for rediss:// servers that require one; needs --tls-key' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-key -d 'Private key (PEM) of the --tls-cert client certificate' -r -F
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l log-format -d 'Form of stderr lines: text for people, json for log collectors (one object per line, each event\'s fields in docs/json.md)' -r -f -a "text\t''
json\t''"
complete -c redlock -n "__fish_redlock_using_subcommand generate" -l tls-insecure -d 'DANGEROUS: do not verify rediss:// servers\' certificates, so anyone on the network path can pose as a server and hand out locks. For testing only; prefer --tls-ca'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s v -l verbose -d 'Print each step\'s per-server outcome and latency, and the validity obtained'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s q -l quiet -d 'Print errors only: no warnings, no events, nothing for a busy lock (the exit status says it; a JSON log still gets its `busy` event)'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s h -l help -d 'Print help (see more with \'--help\')'
complete -c redlock -n "__fish_redlock_using_subcommand generate" -s V -l version -d 'Print version'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "acquire" -d 'Take the lock once (or keep trying for --wait) and print its token'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "release" -d 'Release a lock held by TOKEN (compare-and-delete on every server)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "extend" -d 'Give a lock held by TOKEN a fresh TTL and print the new validity in milliseconds'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "status" -d 'Show who holds a lock on each server, or list every lock under the prefix'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "history" -d 'Show the recent runs of a lock: which host ran each, when, for how long, and how it ended'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "exec" -d 'Hold the lock while COMMAND runs: renew it, and stop COMMAND if the lock is lost'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "latch" -d 'A countdown latch: wait until N jobs on other hosts are done (set, done, wait, status)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "doctor" -d 'Check the servers against what Redlock needs (independent masters, persistence, no eviction, ACL)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "generate" -d 'Write shell completions or man pages (for packagers)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and not __fish_seen_subcommand_from acquire release extend status history exec latch doctor generate help" -f -a "help" -d 'Print this message or the help of the given subcommand(s)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "set" -d 'Create latch NAME, to open once COUNT distinct ids have counted down; exit 0 if it exists with the same count (so every host can run it), 75 if with another'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "done" -d 'Count down once for --id: exit 0 once it is recorded (id, when, by whom) on a quorum'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "wait" -d 'Wait until the latch opens (exit 0), or give up after --wait or when it expires (75), or when too few servers answer to tell (69)'
complete -c redlock -n "__fish_redlock_using_subcommand help; and __fish_seen_subcommand_from latch" -f -a "status" -d 'Show who counted down, when, and what is missing; without NAME, list every latch'
