#!/usr/bin/env bash
# tests/kafka/broker.sh: real Apache Kafka on loopback, for the tests and by
# hand. It resolves the broker's class path from ~/.m2 with Maven offline
# (tests/java/pom.xml, profile `broker`), formats storage with
# kafka.tools.StorageTool and starts KRaft nodes with kafka.Kafka on free
# 127.0.0.1 ports, in the background, with a small heap.
#
# Commands:
#   broker.sh start DIR [OPTIONS]
#       One combined broker+controller node (node id 1), with `--brokers N`
#       followed by broker-only nodes 2..N, or with `--controllers N` a
#       quorum of N controller-only nodes (ids 1..N); `--node-id` moves the
#       ids.
#       DIR must not exist; everything goes below it. Returns once every
#       node's listeners answer ApiVersions (a combined node: once its broker
#       is also unfenced), then prints KEY=VALUE lines (also kept in DIR/env).
#       On failure: stops what it started, prints the logs' tails and one
#       `error: ...` line on stderr, removes DIR and exits 1.
#   broker.sh stop DIR [--keep]
#       Stops everything started in DIR (SIGTERM, SIGKILL after 5 s) and
#       removes DIR (`--keep` keeps it, for the logs). Safe to call twice.
#   broker.sh stop-node DIR ID [--kill]
#       Stops one node (SIGTERM, or SIGKILL with --kill) and waits for it.
#   broker.sh start-node DIR ID
#       Starts a stopped node again on its data and ports; returns once it
#       answers.
#   broker.sh pause-proxy DIR ID / resume-proxy DIR ID
#       Freezes (SIGSTOP) or thaws (SIGCONT) node ID's proxy: while frozen,
#       nothing reaches that controller, but what it sends still goes out.
#   broker.sh classpath [VERSION]
#       Prints the broker class path of VERSION (default: the pinned one).
#
# Options of start:
#   --version V        Kafka release (default: `kafka.version` of
#                      tests/java/pom.xml). `.ci/run` fetches the releases
#                      the tests use: that one and `broker.old.version`.
#   --controllers N    a quorum of N controllers and no broker.
#   --brokers N        N brokers (default 1): the combined node 1, the only
#                      controller, and broker-only nodes 2..N, so that a
#                      partition has brokers that do not lead it.
#   --proxy BIN        with --controllers: in front of each controller, run
#                      `BIN proxy --listen 127.0.0.1:0 --upstream <its
#                      listener> --log DIR/proxy-ID.log` (BIN is the
#                      kafka-protocol binary). The quorum's addresses (the
#                      voters given at format time, the bootstrap servers
#                      and each controller's advertised listener) are the
#                      proxies', so every controller-to-controller exchange
#                      passes through one.
#   --feature F=L      a feature level for StorageTool format (repeatable),
#                      such as share.version=1.
#   --config K=V       an extra server property on every node (repeatable).
#   --heap SIZE        the JVM's -Xmx per node (default 384m).
#   --full-jit         the JVM's default compilers (C1 then C2) and garbage
#                      collector instead of C1 only and the serial collector:
#                      slower to start, faster once warm (for benchmarks).
#   --owner PID        stop everything and remove DIR when process PID ends,
#                      so that a test killed outright leaves no JVM running.
#   --timeout SECONDS  how long to wait for the nodes (default 120).
#   --node-id ID       the first node's id (default 1); the others follow
#                      it (ID+1, ...).
#   --port PORT        the combined node's PLAINTEXT listener port (default:
#                      a free one), for clients that expect a fixed one
#                      such as 9092.
#   --sasl USER:PASSWORD  a combined node also gets a SASL_PLAINTEXT
#                      listener with PLAIN and SCRAM-SHA-256, both knowing
#                      USER (SCRAM's credential is added at format time).
#   --advertise ID=HOST:PORT  broker ID also gets a second PLAINTEXT listener,
#                      CLIENT, on a free port of its own, advertised as
#                      HOST:PORT (Kafka's advertised.listeners): a client
#                      that bootstraps through it is told HOST:PORT for
#                      every broker so set, as behind a proxy that owns
#                      those addresses (repeatable; every broker of a
#                      cluster, or none, should be set, since a client only
#                      learns brokers on the listener it asked through).
#                      Traffic between nodes stays on PLAINTEXT.
#   --node-config ID:K=V  an extra server property on node ID only
#                      (repeatable), such as 2:broker.rack=2.
#
# Output of start, one KEY=VALUE per line:
#   version=V  cluster_id=ID  nodes=1 2 3
#   bootstrap=127.0.0.1:PORT     a combined node's PLAINTEXT listener
#   node.ID.bootstrap=127.0.0.1:PORT  each broker's PLAINTEXT listener
#   node.ID.client=127.0.0.1:PORT     with --advertise: its CLIENT listener
#   node.ID.advertised=HOST:PORT      with --advertise: how CLIENT is advertised
#   sasl_bootstrap=127.0.0.1:PORT  with --sasl: its SASL_PLAINTEXT listener
#   controller=127.0.0.1:PORT    a combined node's CONTROLLER listener
#   node.ID.controller=127.0.0.1:PORT   each node's own controller listener
#   node.ID.quorum=127.0.0.1:PORT       the address the quorum uses for it
#                                       (its proxy's with --proxy)
#   node.ID.proxy_log=PATH              with --proxy: that proxy's log
#   node.ID.log=PATH                    the node's server.log
#
# Environment: JAVA (default: $JAVA_HOME/bin/java, else java), MVN (mvn).
# Needs bash, coreutils and, for the class path, the jars in ~/.m2:
#   mvn -f tests/java/pom.xml -P broker -Dbroker.version=V dependency:go-offline
set -eEuo pipefail

SELF="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
POM="$ROOT/tests/java/pom.xml"
MVN="${MVN:-mvn}"
if [[ -z ${JAVA:-} ]]; then
    if [[ -n ${JAVA_HOME:-} && -x $JAVA_HOME/bin/java ]]; then JAVA="$JAVA_HOME/bin/java"; else JAVA=java; fi
fi

die() {
    echo "error: $*" >&2
    exit 1
}

pinned_version() {
    sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$POM" | head -n 1
}

# Whether every jar of class path file $1 is there.
jars_present() {
    local jar
    IFS=: read -r -a jars <"$1"
    for jar in "${jars[@]}"; do [[ -f $jar ]] || return 1; done
}

# The broker class path of release $1, resolved offline once and cached in
# tests/java/target (written to a temporary file, then renamed, so that
# parallel starts never read half a file).
classpath() {
    local version=$1 cache="$ROOT/tests/java/target/broker-$1.classpath" tmp
    if [[ ! -s $cache || $POM -nt $cache ]] || ! jars_present "$cache"; then
        mkdir -p "$ROOT/tests/java/target"
        tmp="$cache.$$"
        if ! "$MVN" -B -o -q -f "$POM" -P broker -Dbroker.version="$version" \
            dependency:build-classpath -Dmdep.outputFile="$tmp" >"$tmp.log" 2>&1; then
            cat "$tmp.log" >&2
            rm -f "$tmp" "$tmp.log"
            die "cannot resolve org.apache.kafka:kafka_2.13:$version offline (run \`mvn -f tests/java/pom.xml -P broker -Dbroker.version=$version dependency:go-offline\` once, online)"
        fi
        rm -f "$tmp.log"
        mv "$tmp" "$cache"
    fi
    cat "$cache"
}

# 16 random bytes as Kafka writes a Uuid: base64url without padding. Like
# Kafka's Uuid.randomUuid, it draws again when the text starts with "-":
# kafka-storage's option parser would take `--cluster-id -x...` for an option
# without its argument (one start in 64 failed that way).
random_uuid() {
    local uuid
    while :; do
        uuid=$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c 1-22)
        [[ $uuid == -* ]] || break
    done
    echo "$uuid"
}

# Whether something listens on 127.0.0.1:$1.
listening() {
    (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null
}

# Sets the variable named $1 to a port below Linux's ephemeral range that
# nothing listens on and this start has not taken yet ($TAKEN). It assigns
# rather than prints, since a `$(...)` would take the port in a subshell
# and the next call could hand it out again.
TAKEN=" "
free_port() {
    local port
    while :; do
        port=$((20000 + RANDOM % 12000))
        [[ $TAKEN == *" $port "* ]] && continue
        listening "$port" && continue
        TAKEN+="$port "
        printf -v "$1" '%s' "$port"
        return
    done
}

# Whether a Kafka listener on 127.0.0.1:$1 answers ApiVersions v0 with
# correlation id 1 and error code 0.
answers() {
    local reply
    { exec 3<>"/dev/tcp/127.0.0.1/$1"; } 2>/dev/null || return 1
    # Size 10: api key 18, version 0, correlation id 1, null client id.
    printf '\x00\x00\x00\x0a\x00\x12\x00\x00\x00\x00\x00\x01\xff\xff' >&3
    reply=$(timeout 5 head -c 10 <&3 | od -An -tx1 | tr -d ' \n') || true
    exec 3<&- 3>&-
    # The size, then correlation id 1, then error code 0.
    [[ ${reply:8:12} == 000000010000 ]]
}

alive() {
    [[ -f $1 ]] && kill -0 "$(cat "$1")" 2>/dev/null
}

# Stops the process whose pid is in file $1: SIGTERM (or $2), then SIGKILL
# after 15 s.
stop_pid() {
    local file=$1 signal=${2:-TERM} pid i
    [[ -f $file ]] || return 0
    pid=$(cat "$file")
    kill "-$signal" "$pid" 2>/dev/null || true
    # A frozen proxy handles SIGTERM once thawed.
    kill -CONT "$pid" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null || true
    while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    rm -f "$file"
}

env_value() {
    sed -n "s/^$2=//p" "$1/env.start" 2>/dev/null | head -n 1
}

# Starts node $2 of DIR $1 from its server.properties, in the background.
# Its server.log grows across restarts; node/log-start says where this run's
# lines begin.
launch() {
    local dir=$1 id=$2 node="$1/node-$2" version heap
    version=$(env_value "$dir" version)
    heap=$(env_value "$dir" heap)
    # C1 only and the serial collector: a small node on few cores starts
    # faster and competes less for them; --full-jit keeps the JVM's defaults.
    local tuning=(-XX:+UseSerialGC -XX:TieredStopAtLevel=1)
    [[ $(env_value "$dir" jit) == full ]] && tuning=()
    touch "$node/server.log"
    echo $(($(wc -l <"$node/server.log") + 1)) >"$node/log-start"
    "$JAVA" -Xmx"$heap" -Xms64m ${tuning[@]+"${tuning[@]}"} \
        -Djava.awt.headless=true -Dlog4j2.configurationFile="$node/log4j2.properties" \
        -cp "$(classpath "$version")" kafka.Kafka "$node/server.properties" \
        </dev/null >"$node/stdout.log" 2>&1 &
    echo $! >"$node/pid"
}

# Waits until node $2 of DIR $1 answers on every listener (and a broker is
# unfenced), or fails after $3 seconds.
await_node() {
    local dir=$1 id=$2 timeout=$3 node="$1/node-$2" deadline port ready
    deadline=$((SECONDS + timeout))
    while ((SECONDS < deadline)); do
        if ! alive "$node/pid"; then
            echo "node $id exited" >&2
            return 1
        fi
        ready=1
        for port in $(cat "$node/ports"); do
            answers "$port" || ready=0
        done
        if ((ready)) && tail -n "+$(cat "$node/log-start")" "$node/server.log" |
            grep -q "Kafka Server started"; then
            return 0
        fi
        sleep 0.25
    done
    echo "node $id did not answer within $timeout s" >&2
    return 1
}

# The tails of every log in DIR $1, on stderr.
show_logs() {
    local file
    for file in "$1"/node-*/server.log "$1"/node-*/stdout.log "$1"/proxy-*.err; do
        [[ -s $file ]] || continue
        echo "--- last lines of $file" >&2
        grep -v '^\s' "$file" | tail -n 25 >&2 || true
    done
}

# Stops every node and proxy of DIR $1 at once: SIGTERM to all, then
# SIGKILL to whatever still runs after 5 s (the directory goes anyway).
stop_all() {
    local dir=$1 file pids=() pid i running
    rm -f "$dir/env"
    for file in "$dir"/node-*/pid "$dir"/proxy-*.pid; do
        [[ -e $file ]] || continue
        pid=$(cat "$file")
        kill -TERM "$pid" 2>/dev/null || true
        kill -CONT "$pid" 2>/dev/null || true
        pids+=("$pid")
        rm -f "$file"
    done
    for ((i = 0; i < 50; i++)); do
        running=0
        for pid in ${pids[@]+"${pids[@]}"}; do
            kill -0 "$pid" 2>/dev/null && running=1
        done
        ((running)) || return 0
        sleep 0.1
    done
    for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do
        while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
    done
}

# The ERR trap of a start: show why, undo it all, one error line, status 1.
start_failed() {
    trap - ERR
    show_logs "$STARTING"
    stop_all "$STARTING"
    rm -rf "$STARTING"
    echo "error: Kafka did not start in $STARTING (the logs' last lines are above)" >&2
    exit 1
}

cmd_start() {
    local dir=${1:?usage: broker.sh start DIR [OPTIONS]}
    shift
    local version="" controllers=0 brokers=1 proxy="" heap=384m owner="" timeout=120
    local features=() configs=() sasl="" jit=c1 first=1 port="" count advertise=() node_configs=()
    while (($#)); do
        case $1 in
        --version) version=$2 ;;
        --controllers) controllers=$2 ;;
        --brokers) brokers=$2 ;;
        --proxy) proxy=$2 ;;
        --feature) features+=(--feature "$2") ;;
        --config) configs+=("$2") ;;
        --heap) heap=$2 ;;
        --owner) owner=$2 ;;
        --timeout) timeout=$2 ;;
        --sasl) sasl=$2 ;;
        --node-id) first=$2 ;;
        --port) port=$2 ;;
        --advertise) advertise+=("$2") ;;
        --node-config) node_configs+=("$2") ;;
        --full-jit)
            jit=full
            shift
            continue
            ;;
        *) die "unknown option $1" ;;
        esac
        shift 2 || die "option $1 needs a value"
    done
    [[ -e $dir ]] && die "$dir exists"
    [[ -n $proxy && $controllers -eq 0 ]] && die "--proxy needs --controllers"
    [[ -n $sasl && $controllers -ne 0 ]] && die "--sasl needs a combined node"
    [[ $brokers -gt 1 && $controllers -ne 0 ]] && die "--brokers needs a combined node"
    [[ $brokers =~ ^[1-9][0-9]*$ ]] || die "--brokers needs a count of 1 or more"
    [[ -z $sasl || $sasl == ?*:?* ]] || die "--sasl needs USER:PASSWORD"
    [[ $first =~ ^[0-9]+$ ]] || die "--node-id needs a node id of 0 or more"
    [[ -z $port || ($port =~ ^[1-9][0-9]*$ && $port -lt 65536) ]] || die "--port needs a port"
    [[ -n $port && $controllers -ne 0 ]] && die "--port needs a combined node"
    local entry
    for entry in ${advertise[@]+"${advertise[@]}"}; do
        [[ $entry =~ ^[0-9]+=[^=]+:[0-9]+$ ]] || die "--advertise needs ID=HOST:PORT, not $entry"
        [[ $controllers -eq 0 ]] || die "--advertise needs brokers, not --controllers"
        ((${entry%%=*} >= first && ${entry%%=*} < first + brokers)) || die "--advertise $entry: no broker ${entry%%=*}"
    done
    for entry in ${node_configs[@]+"${node_configs[@]}"}; do
        [[ $entry =~ ^[0-9]+:[^=]+=.*$ ]] || die "--node-config needs ID:KEY=VALUE, not $entry"
    done
    [[ -z $version ]] && version=$(pinned_version)
    "$JAVA" -version >/dev/null 2>&1 || die "\`$JAVA\` does not run"
    local cp
    cp=$(classpath "$version") || exit 1
    mkdir -p "$dir"
    dir=$(cd "$dir" && pwd)
    STARTING=$dir
    trap start_failed ERR
    trap 'stop_all "$STARTING"; rm -rf "$STARTING"; exit 1' INT TERM

    local cluster_id ids quorum_ids
    cluster_id=$(random_uuid)
    if ((controllers)); then count=$controllers; else count=$brokers; fi
    ids=$(seq "$first" $((first + count - 1)))
    quorum_ids=$ids
    ((controllers)) || quorum_ids=$first
    {
        echo "version=$version"
        echo "cluster_id=$cluster_id"
        echo "heap=$heap"
        echo "jit=$jit"
        echo "nodes="$ids
    } >"$dir/env.start"

    # Broker-only nodes (2..N of --brokers): a PLAINTEXT listener each, and
    # no part in the quorum.
    for id in $ids; do
        ((id == first || controllers)) && continue
        mkdir -p "$dir/node-$id/data"
        free_port broker
        echo "$broker" >"$dir/node-$id/ports"
        echo "node.$id.bootstrap=127.0.0.1:$broker" >>"$dir/env.start"
        echo "node.$id.log=$dir/node-$id/server.log" >>"$dir/env.start"
    done

    # Ports: each node's listeners, and with --proxy a proxy per controller,
    # whose port is the one the quorum knows the controller by.
    local id controller broker quorum_port voters="" bootstrap="" initial=""
    for id in $quorum_ids; do
        mkdir -p "$dir/node-$id/data"
        free_port controller
        echo "node.$id.controller=127.0.0.1:$controller" >>"$dir/env.start"
        if ((controllers)); then
            echo "$controller" >"$dir/node-$id/ports"
        else
            if [[ -n $port ]]; then
                listening "$port" && die "port $port is taken"
                broker=$port
                TAKEN+="$port "
            else
                free_port broker
            fi
            echo "$broker $controller" >"$dir/node-$id/ports"
            echo "bootstrap=127.0.0.1:$broker" >>"$dir/env.start"
            echo "node.$id.bootstrap=127.0.0.1:$broker" >>"$dir/env.start"
            if [[ -n $sasl ]]; then
                local sasl_port
                free_port sasl_port
                echo "$broker $controller $sasl_port" >"$dir/node-$id/ports"
                echo "sasl_bootstrap=127.0.0.1:$sasl_port" >>"$dir/env.start"
            fi
            echo "controller=127.0.0.1:$controller" >>"$dir/env.start"
        fi
        quorum_port=$controller
        if [[ -n $proxy ]]; then
            "$proxy" proxy --listen 127.0.0.1:0 --upstream "127.0.0.1:$controller" \
                --log "$dir/proxy-$id.log" </dev/null >"$dir/proxy-$id.out" 2>"$dir/proxy-$id.err" &
            echo $! >"$dir/proxy-$id.pid"
            local i
            for ((i = 0; i < 100; i++)); do
                grep -qs '^listening on ' "$dir/proxy-$id.out" && break
                alive "$dir/proxy-$id.pid" || break
                sleep 0.1
            done
            quorum_port=$(sed -n 's/^listening on .*:\([0-9]*\)$/\1/p' "$dir/proxy-$id.out")
            [[ -n $quorum_port ]] || false
            echo "node.$id.proxy_log=$dir/proxy-$id.log" >>"$dir/env.start"
        fi
        echo "node.$id.quorum=127.0.0.1:$quorum_port" >>"$dir/env.start"
        echo "node.$id.log=$dir/node-$id/server.log" >>"$dir/env.start"
        echo "$quorum_port" >"$dir/node-$id/quorum-port"
        bootstrap+="${bootstrap:+,}127.0.0.1:$quorum_port"
        initial+="${initial:+,}$id@127.0.0.1:$quorum_port:$(random_uuid)"
    done

    # With --advertise: a CLIENT listener per broker so set, after its
    # other ports.
    for entry in ${advertise[@]+"${advertise[@]}"}; do
        local client
        id=${entry%%=*}
        free_port client
        echo "$(cat "$dir/node-$id/ports") $client" >"$dir/node-$id/ports"
        echo "$client ${entry#*=}" >"$dir/node-$id/client"
        echo "node.$id.client=127.0.0.1:$client" >>"$dir/env.start"
        echo "node.$id.advertised=${entry#*=}" >>"$dir/env.start"
    done

    for id in $ids; do
        local node="$dir/node-$id" ports listeners advertised roles
        read -r -a ports <"$node/ports"
        if ((controllers)); then
            quorum_port=$(cat "$node/quorum-port")
            roles=controller
            listeners="CONTROLLER://127.0.0.1:${ports[0]}"
            advertised="CONTROLLER://127.0.0.1:$quorum_port"
        elif ((id != first)); then
            roles=broker
            listeners="PLAINTEXT://127.0.0.1:${ports[0]}"
            advertised=$listeners
        else
            quorum_port=$(cat "$node/quorum-port")
            roles=broker,controller
            listeners="PLAINTEXT://127.0.0.1:${ports[0]},CONTROLLER://127.0.0.1:${ports[1]}"
            advertised="PLAINTEXT://127.0.0.1:${ports[0]},CONTROLLER://127.0.0.1:$quorum_port"
            if [[ -n $sasl ]]; then
                listeners+=",SASL_PLAINTEXT://127.0.0.1:${ports[2]}"
                advertised+=",SASL_PLAINTEXT://127.0.0.1:${ports[2]}"
            fi
        fi
        if [[ -f $node/client ]]; then
            local client_port client_address
            read -r client_port client_address <"$node/client"
            listeners+=",CLIENT://127.0.0.1:$client_port"
            advertised+=",CLIENT://$client_address"
        fi
        {
            echo "process.roles=$roles"
            echo "node.id=$id"
            echo "controller.quorum.bootstrap.servers=$bootstrap"
            echo "listeners=$listeners"
            echo "advertised.listeners=$advertised"
            echo "controller.listener.names=CONTROLLER"
            echo "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,CLIENT:PLAINTEXT${sasl:+,SASL_PLAINTEXT:SASL_PLAINTEXT}"
            echo "log.dirs=$node/data"
            if [[ -n $sasl ]]; then
                echo "sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256"
                echo "listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required user_${sasl%%:*}=\"${sasl#*:}\";"
                echo "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;"
            fi
            if ((!controllers)); then
                echo "inter.broker.listener.name=PLAINTEXT"
                # One controller: every internal topic with one replica and one
                # partition, and no wait before a group's first rebalance.
                echo "num.partitions=1"
                echo "offsets.topic.replication.factor=1"
                echo "offsets.topic.num.partitions=1"
                echo "transaction.state.log.replication.factor=1"
                echo "transaction.state.log.min.isr=1"
                echo "transaction.state.log.num.partitions=1"
                echo "share.coordinator.state.topic.replication.factor=1"
                echo "share.coordinator.state.topic.min.isr=1"
                echo "share.coordinator.state.topic.num.partitions=1"
                echo "group.initial.rebalance.delay.ms=0"
            fi
            local config
            for config in ${configs[@]+"${configs[@]}"}; do echo "$config"; done
            for config in ${node_configs[@]+"${node_configs[@]}"}; do
                if [[ ${config%%:*} == "$id" ]]; then echo "${config#*:}"; fi
            done
        } >"$node/server.properties"
        cat >"$node/log4j2.properties" <<EOF
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = $node/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
EOF
        local format=()
        if ((controllers)); then
            format=(--initial-controllers "$initial")
        elif ((id == first)); then
            format=(--standalone)
        else
            format=()
        fi
        [[ -n $sasl && $id -eq $first ]] && format+=(--add-scram "SCRAM-SHA-256=[name=${sasl%%:*},password=${sasl#*:}]")
        "$JAVA" -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
            -Dlog4j2.configurationFile="$node/log4j2.properties" -cp "$cp" \
            kafka.tools.StorageTool format --config "$node/server.properties" \
            --cluster-id "$cluster_id" ${format[@]+"${format[@]}"} ${features[@]+"${features[@]}"} \
            </dev/null >"$node/format.log" 2>&1 || {
            cat "$node/format.log" >&2
            false
        }
    done

    for id in $ids; do launch "$dir" "$id"; done
    for id in $ids; do await_node "$dir" "$id" "$timeout"; done

    trap - ERR INT TERM
    # DIR/env first: the watchdog reads its absence as a stop. Forked before
    # it, the watchdog either left at once (and never stopped anything) or,
    # when the file appeared between its two tests, stopped the nodes it
    # had just seen start.
    grep -v -e '^heap=' -e '^jit=' "$dir/env.start" >"$dir/env"
    if [[ -n $owner ]]; then
        # The watchdog: once the owner is gone, stop everything; once DIR/env
        # is gone (a stop), leave.
        (
            while [[ -f $dir/env ]] && kill -0 "$owner" 2>/dev/null; do sleep 1; done
            [[ -f $dir/env ]] && "$SELF" stop "$dir"
        ) </dev/null >/dev/null 2>&1 &
    fi
    cat "$dir/env"
}

cmd_stop() {
    local dir=${1:?usage: broker.sh stop DIR [--keep]}
    [[ -d $dir ]] || return 0
    stop_all "$dir"
    [[ ${2:-} == --keep ]] || rm -rf "$dir"
}

cmd_stop_node() {
    local dir=${1:?usage: broker.sh stop-node DIR ID [--kill]} id=${2:?node id}
    local signal=TERM
    [[ ${3:-} == --kill ]] && signal=KILL
    [[ -d $dir/node-$id ]] || die "no node $id in $dir"
    stop_pid "$dir/node-$id/pid" "$signal"
}

cmd_start_node() {
    local dir=${1:?usage: broker.sh start-node DIR ID} id=${2:?node id}
    [[ -d $dir/node-$id ]] || die "no node $id in $dir"
    alive "$dir/node-$id/pid" && die "node $id is running"
    launch "$dir" "$id"
    await_node "$dir" "$id" 120 || {
        show_logs "$dir"
        die "node $id did not start again"
    }
}

cmd_proxy_signal() {
    local signal=$1 dir=${2:?usage: broker.sh pause-proxy|resume-proxy DIR ID} id=${3:?node id}
    alive "$dir/proxy-$id.pid" || die "no proxy $id running in $dir"
    kill "-$signal" "$(cat "$dir/proxy-$id.pid")"
}

command=${1:-}
shift || true
case $command in
start) cmd_start "$@" ;;
stop) cmd_stop "$@" ;;
stop-node) cmd_stop_node "$@" ;;
start-node) cmd_start_node "$@" ;;
pause-proxy) cmd_proxy_signal STOP "$@" ;;
resume-proxy) cmd_proxy_signal CONT "$@" ;;
classpath) classpath "${1:-$(pinned_version)}" ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
