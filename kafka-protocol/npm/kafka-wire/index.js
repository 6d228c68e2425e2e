'use strict';
// kafka-wire: a fake Kafka cluster for tests. `startFakeCluster` runs the
// `kafka-protocol fake` binary of this platform's package
// (@kafka-wire/<platform>-<arch>, an optional dependency: npm installs the
// one whose `os` and `cpu` match) with `--control --stop-on-eof`: the
// cluster takes commands from a pipe this process holds, and stops when
// that pipe ends, on `stop()` or when this process dies on any path.

const { spawn } = require('node:child_process');
const fs = require('node:fs');

/** Lines of the child's standard error kept for error messages. */
const STDERR_LINES = 200;

/** The platforms with a package, as `${process.platform}-${process.arch}`. */
const PLATFORMS = ['darwin-arm64', 'darwin-x64', 'linux-arm64', 'linux-x64', 'win32-x64'];

/** `kafka-protocol fake` refused its settings, could not start, or ended. */
class FakeClusterError extends Error {
  constructor(message, { exitCode = null, stderr = '' } = {}) {
    super(message);
    this.name = 'FakeClusterError';
    this.exitCode = exitCode;
    this.stderr = stderr;
  }
}

/** A control command was refused; the message is the cluster's answer. */
class ControlError extends FakeClusterError {
  constructor(message, command) {
    super(message);
    this.name = 'ControlError';
    this.command = command;
  }
}

/**
 * The path of this platform's `kafka-protocol` binary: `KAFKA_WIRE_BINARY`
 * when set, else the one in @kafka-wire/<platform>-<arch>.
 */
function binaryPath() {
  const override = process.env.KAFKA_WIRE_BINARY;
  if (override) {
    if (!fs.existsSync(override)) {
      throw new FakeClusterError(`KAFKA_WIRE_BINARY=${override} does not exist`);
    }
    return override;
  }
  const platform = `${process.platform}-${process.arch}`;
  const pkg = `@kafka-wire/${platform}`;
  const exe = process.platform === 'win32' ? 'kafka-protocol.exe' : 'kafka-protocol';
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    const known = PLATFORMS.includes(platform)
      ? `npm installs it with kafka-wire as an optional dependency: was it installed with --omit=optional, or copied from another platform's node_modules?`
      : `kafka-wire has no package for ${platform} (there are: ${PLATFORMS.join(', ')})`;
    throw new FakeClusterError(`kafka-wire: ${pkg}, which carries kafka-protocol for this platform, is not installed; ${known}`);
  }
}

/** The counts of a `faults error=2,delay=0,...` line, by kind. */
function parseFaultCounts(line) {
  const counts = {};
  const body = line.trim().replace(/^faults /, '');
  for (const item of body.split(',')) {
    const [name, number] = item.split('=');
    if (name && /^\d+$/.test(number || '')) counts[name] = Number(number);
  }
  return counts;
}

function asList(value) {
  if (value === undefined || value === null) return [];
  return typeof value === 'string' ? [value] : Array.from(value);
}

/** The arguments of `kafka-protocol fake` for `options`. */
function fakeArgs(options) {
  const {
    brokers = 3,
    topics,
    faults,
    seed,
    sasl,
    host,
    defaultPartitions,
    autoCreate = true,
    firstSequenceFromZero = false,
    args = [],
  } = options;
  const argv = ['fake', '--brokers', String(brokers)];
  if (host !== undefined) argv.push('--host', host);
  const topicList =
    topics && typeof topics === 'object' && !Array.isArray(topics) && typeof topics[Symbol.iterator] !== 'function'
      ? Object.entries(topics).map(([name, partitions]) => `${name}:${partitions}`)
      : asList(topics);
  for (const topic of topicList) argv.push('--topic', String(topic));
  if (defaultPartitions !== undefined) argv.push('--default-partitions', String(defaultPartitions));
  if (!autoCreate) argv.push('--no-auto-create');
  for (const user of asList(sasl)) {
    argv.push('--sasl', typeof user === 'string' ? user : `${user.mechanism}:${user.username}:${user.password}`);
  }
  for (const fault of asList(faults)) argv.push('--fault', String(fault));
  if (seed !== undefined && seed !== null) argv.push('--seed', String(seed));
  if (firstSequenceFromZero) argv.push('--first-sequence-from-zero');
  argv.push(...args.map(String), '--control', '--stop-on-eof');
  return argv;
}

/** Splits a stream into lines, calling `onLine` for each. */
function lines(stream, onLine) {
  let rest = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    rest += chunk;
    let newline;
    while ((newline = rest.indexOf('\n')) >= 0) {
      onLine(rest.slice(0, newline).replace(/\r$/, ''));
      rest = rest.slice(newline + 1);
    }
  });
  stream.on('end', () => {
    if (rest) onLine(rest);
    rest = '';
  });
}

/**
 * Starts a fake Kafka cluster and resolves once every broker listens.
 * See index.d.ts for the options and the handle.
 */
function startFakeCluster(options = {}) {
  const startTimeoutMs = options.startTimeoutMs ?? 30000;
  const controlTimeoutMs = options.controlTimeoutMs ?? 30000;
  let binary;
  let argv;
  try {
    binary = options.binary ?? binaryPath();
    argv = fakeArgs(options);
  } catch (error) {
    return Promise.reject(error);
  }
  const child = spawn(binary, argv, { stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true });
  // A cluster left running must not keep this process alive: nothing
  // here holds the event loop but a pending start, command or stop (their
  // timers). When this process ends, the pipe ends, and the cluster stops.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) stream.unref?.();

  const stderr = [];
  let countsLine = null;
  const waiting = []; // resolvers of the next stdout lines, in order
  let exited = null; // { code, signal } once it has exited
  const exitWaiters = [];
  let nextId = 1;
  let finalCounts = null;

  const stderrText = () => stderr.join('\n');
  const errorMessage = (fallback) => {
    const at = stderr.findIndex((line) => line.startsWith('error:'));
    if (at >= 0) {
      return stderr
        .slice(at)
        .filter((line) => line.trim() && !line.startsWith('For more information'))
        .join('\n');
    }
    return stderr.length ? `${fallback}: ${stderrText()}` : fallback;
  };
  const gone = () =>
    new FakeClusterError(errorMessage(`kafka-protocol fake has exited (exit status ${exited?.code ?? exited?.signal})`), {
      exitCode: exited?.code ?? null,
      stderr: stderrText(),
    });

  lines(child.stderr, (line) => {
    if (line.startsWith('faults ')) countsLine = line;
    stderr.push(line);
    if (stderr.length > STDERR_LINES) stderr.shift();
  });
  lines(child.stdout, (line) => {
    const next = waiting.shift();
    if (next) next.resolve(line);
  });
  // The exit is reported once both pipes are read to the end ('close').
  child.on('close', (code, signal) => {
    exited = { code, signal };
    for (const next of waiting.splice(0)) next.reject(gone());
    for (const resolve of exitWaiters.splice(0)) resolve();
  });
  child.stdin.on('error', () => {}); // a closed pipe shows as the exit
  const spawnFailed = new Promise((_, reject) => {
    child.on('error', (error) =>
      reject(new FakeClusterError(`cannot run ${binary}: ${error.message}`)),
    );
  });

  /** The next line of standard output, or a rejection after `ms`. */
  function nextLine(ms, what) {
    return new Promise((resolve, reject) => {
      if (exited) {
        reject(gone());
        return;
      }
      const timer = setTimeout(() => {
        const at = waiting.indexOf(entry);
        if (at >= 0) waiting.splice(at, 1);
        const error = new FakeClusterError(`kafka-protocol fake: no ${what} in ${ms} ms`, { stderr: stderrText() });
        error.timedOut = true;
        reject(error);
      }, ms);
      const entry = {
        resolve: (line) => {
          clearTimeout(timer);
          resolve(line);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      waiting.push(entry);
    });
  }

  function waitExit(ms) {
    if (exited) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), ms);
      exitWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  // Commands are answered one line each, in order.
  let queue = Promise.resolve();
  function control(command, fields = {}) {
    const message = typeof command === 'string' ? { cmd: command, ...fields } : { ...command, ...fields };
    if (typeof message.cmd !== 'string') {
      return Promise.reject(new TypeError('a control command needs `cmd`'));
    }
    const run = async () => {
      if (exited || finalCounts) throw gone();
      message.id = nextId++;
      const answered = nextLine(controlTimeoutMs, `answer to ${message.cmd}`);
      child.stdin.write(`${JSON.stringify(message)}\n`);
      const answer = JSON.parse(await answered);
      if (answer.id !== message.id) {
        throw new FakeClusterError(`an answer out of turn: ${JSON.stringify(answer)}`);
      }
      if ('error' in answer) throw new ControlError(String(answer.error), message);
      delete answer.id;
      delete answer.ok;
      return answer;
    };
    const result = queue.then(run, run);
    queue = result.catch(() => {});
    return result;
  }

  async function stop({ timeoutMs = 10000 } = {}) {
    if (finalCounts) return { ...finalCounts };
    child.stdin.end();
    if (!(await waitExit(timeoutMs))) {
      child.kill('SIGTERM');
      if (!(await waitExit(timeoutMs))) {
        child.kill('SIGKILL');
        await waitExit(timeoutMs);
      }
    }
    if (!countsLine) {
      throw new FakeClusterError(errorMessage(`kafka-protocol fake ended with exit status ${exited?.code ?? exited?.signal}`), {
        exitCode: exited?.code ?? null,
        stderr: stderrText(),
      });
    }
    finalCounts = parseFaultCounts(countsLine);
    return { ...finalCounts };
  }

  const started = nextLine(startTimeoutMs, 'bootstrap line').then(
    (line) => {
      if (!line.startsWith('bootstrap ')) {
        throw new FakeClusterError(`kafka-protocol fake: not a bootstrap line: ${line}`);
      }
      const cluster = {
        bootstrap: line.slice('bootstrap '.length).trim(),
        brokers: line.slice('bootstrap '.length).trim().split(','),
        pid: child.pid,
        fault: async (spec) => (await control('fault', { spec })).control,
        control,
        injected: async () => (await control('counts')).faults,
        stop,
      };
      if (typeof Symbol.asyncDispose === 'symbol') {
        cluster[Symbol.asyncDispose] = () => stop();
      }
      return cluster;
    },
    async (error) => {
      if (!exited) child.kill('SIGKILL');
      await waitExit(5000);
      if (error.timedOut || !exited) throw error;
      throw new FakeClusterError(
        errorMessage(`kafka-protocol fake did not start (exit status ${exited.code ?? exited.signal})`),
        { exitCode: exited.code, stderr: stderrText() },
      );
    },
  );
  return Promise.race([started, spawnFailed]);
}

module.exports = {
  startFakeCluster,
  binaryPath,
  parseFaultCounts,
  FakeClusterError,
  ControlError,
  PLATFORMS,
};
// `import kafkaWire from 'kafka-wire'` from TypeScript compiled to CommonJS.
module.exports.default = module.exports;
