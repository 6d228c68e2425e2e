"""A fake Kafka cluster in a child process: ``kafka-protocol fake --control``.

The child reads control commands from a pipe this process holds, and stops
when that pipe ends (``--stop-on-eof``): when :meth:`FakeCluster.stop`
closes it, and also when this process dies on any path (a crash, a kill),
since the system closes the pipe then. No fake outlives its test process.
"""

from __future__ import annotations

import collections
import itertools
import json
import queue
import subprocess
import threading
from types import TracebackType
from typing import IO, Any, Deque, Dict, Iterable, List, Mapping, Optional, Tuple, Type, Union

from ._binary import find_kafka_protocol

#: A SASL user: ``"MECHANISM:USER:PASSWORD"`` or ``(mechanism, user, password)``.
SaslUser = Union[str, Tuple[str, str, str]]
#: Seed topics: ``{"orders": 6}``, or ``["orders:6"]``.
Topics = Union[Mapping[str, int], Iterable[str]]

#: Lines of the child's standard error kept for error messages.
_STDERR_LINES = 200


class FakeClusterError(RuntimeError):
    """``kafka-protocol fake`` refused its arguments, could not start, or
    stopped unexpectedly. The message is the command's own (its ``error:``
    lines on standard error)."""

    def __init__(self, message: str, *, returncode: Optional[int] = None, stderr: str = "") -> None:
        super().__init__(message)
        #: The message, as the command wrote it.
        self.message = message
        #: The command's exit status, when it has exited.
        self.returncode = returncode
        #: The end of the command's standard error.
        self.stderr = stderr


class ControlError(FakeClusterError):
    """A control command was refused; the message is the cluster's answer."""

    def __init__(self, message: str, command: Mapping[str, Any]) -> None:
        super().__init__(message)
        #: The command, as sent.
        self.command = dict(command)


def _as_list(value: Union[str, Iterable[Any], None]) -> List[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    return list(value)


def _sasl_users(sasl: Union[SaslUser, Iterable[SaslUser], None]) -> List[str]:
    """``"M:U:P"`` for each user; one ``(mechanism, user, password)`` tuple
    is one user."""
    if isinstance(sasl, tuple) and len(sasl) == 3 and all(
        isinstance(part, str) and ":" not in part for part in sasl[:2]
    ):
        return [":".join(sasl)]
    return [u if isinstance(u, str) else ":".join(u) for u in _as_list(sasl)]


def parse_fault_counts(line: str) -> Dict[str, int]:
    """The counts of a ``faults error=2,delay=0,...`` line, by kind."""
    counts: Dict[str, int] = {}
    body = line.strip()
    if body.startswith("faults "):
        body = body[len("faults ") :]
    for item in body.split(","):
        name, _, number = item.partition("=")
        if name and number.isdigit():
            counts[name] = int(number)
    return counts


class FakeCluster:
    """A fake Kafka cluster (``kafka-protocol fake``) for tests.

    >>> with FakeCluster(brokers=3, topics={"orders": 6}) as cluster:
    ...     producer = Producer({"bootstrap.servers": cluster.bootstrap})

    ``faults`` are ``--fault`` specs applied from the start
    (``"produce:error=NOT_LEADER_OR_FOLLOWER:rate=0.05"``,
    ``"every=500ms:move-leaders"``); ``seed`` seeds their random choices;
    ``sasl`` users make every listener require SASL.
    ``first_sequence_from_zero`` applies Kafka 4.5's rule to an idempotent
    producer's first batch on a new partition (it must start at sequence 0;
    Kafka 4.4.0, the default, takes any: KAFKA-15591). ``args`` are more
    arguments of ``kafka-protocol fake`` as they are
    (``["--max-bytes", "1000000"]``).

    Errors of the command (a bad spec, a refused setting) raise
    :class:`FakeClusterError` with its message; a refused control command
    raises :class:`ControlError`.
    """

    def __init__(
        self,
        brokers: int = 3,
        topics: Optional[Topics] = None,
        faults: Union[str, Iterable[str], None] = None,
        seed: Optional[int] = None,
        sasl: Union[SaslUser, Iterable[SaslUser], None] = None,
        *,
        host: Optional[str] = None,
        default_partitions: Optional[int] = None,
        auto_create: bool = True,
        first_sequence_from_zero: bool = False,
        args: Iterable[str] = (),
        start_timeout: float = 30.0,
        control_timeout: float = 30.0,
        binary: Optional[str] = None,
    ) -> None:
        self._brokers = brokers
        if isinstance(topics, Mapping):
            self._topics = [f"{name}:{partitions}" for name, partitions in topics.items()]
        else:
            self._topics = [str(t) for t in _as_list(topics)]
        self._faults = [str(f) for f in _as_list(faults)]
        self._seed = seed
        self._sasl = _sasl_users(sasl)
        self._host = host
        self._default_partitions = default_partitions
        self._auto_create = auto_create
        self._first_sequence_from_zero = first_sequence_from_zero
        self._args = [str(a) for a in args]
        self._start_timeout = start_timeout
        self._control_timeout = control_timeout
        self._binary = binary
        self._process: Optional[subprocess.Popen[str]] = None
        self._bootstrap: Optional[str] = None
        self._answers: "queue.Queue[Optional[str]]" = queue.Queue()
        self._stderr: Deque[str] = collections.deque(maxlen=_STDERR_LINES)
        self._counts_line: Optional[str] = None
        self._readers: List[threading.Thread] = []
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._final_counts: Optional[Dict[str, int]] = None

    def command(self) -> List[str]:
        """The command line this cluster runs."""
        argv = [self._binary or find_kafka_protocol(), "fake", "--brokers", str(self._brokers)]
        if self._host is not None:
            argv += ["--host", self._host]
        for topic in self._topics:
            argv += ["--topic", topic]
        if self._default_partitions is not None:
            argv += ["--default-partitions", str(self._default_partitions)]
        if not self._auto_create:
            argv.append("--no-auto-create")
        for user in self._sasl:
            argv += ["--sasl", user]
        for fault in self._faults:
            argv += ["--fault", fault]
        if self._seed is not None:
            argv += ["--seed", str(self._seed)]
        if self._first_sequence_from_zero:
            argv.append("--first-sequence-from-zero")
        argv += self._args
        argv += ["--control", "--stop-on-eof"]
        return argv

    # -- lifecycle ---------------------------------------------------------

    def start(self) -> "FakeCluster":
        """Starts the cluster and waits until every broker listens."""
        if self._process is not None:
            raise FakeClusterError("the cluster was started already")
        process = subprocess.Popen(
            self.command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
            close_fds=True,
        )
        self._process = process
        self._readers = [
            threading.Thread(target=self._read_stdout, args=(process.stdout,), daemon=True),
            threading.Thread(target=self._read_stderr, args=(process.stderr,), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        try:
            line = self._answers.get(timeout=self._start_timeout)
        except queue.Empty:
            self._kill()
            raise FakeClusterError(
                f"kafka-protocol fake printed no bootstrap line in {self._start_timeout} s",
                stderr=self._stderr_text(),
            ) from None
        if line is None or not line.startswith("bootstrap "):
            returncode = self._finish(timeout=5.0)
            raise FakeClusterError(
                self._error_message(f"kafka-protocol fake did not start (exit status {returncode})"),
                returncode=returncode,
                stderr=self._stderr_text(),
            )
        self._bootstrap = line[len("bootstrap ") :].strip()
        return self

    def stop(self, timeout: float = 10.0) -> Dict[str, int]:
        """Stops the cluster; the faults it injected, by kind (as
        :meth:`injected`). Stopping again returns the same counts."""
        if self._final_counts is not None:
            return dict(self._final_counts)
        process = self._process
        if process is None:
            return {}
        returncode = self._finish(timeout=timeout)
        counts = parse_fault_counts(self._counts_line) if self._counts_line else None
        if counts is None:
            raise FakeClusterError(
                self._error_message(f"kafka-protocol fake ended with exit status {returncode}"),
                returncode=returncode,
                stderr=self._stderr_text(),
            )
        self._final_counts = counts
        return dict(counts)

    def __enter__(self) -> "FakeCluster":
        if self._process is None:
            self.start()
        return self

    def __exit__(
        self,
        exc_type: Optional[Type[BaseException]],
        exc: Optional[BaseException],
        traceback: Optional[TracebackType],
    ) -> None:
        if exc_type is None:
            self.stop()
            return
        try:
            self.stop()
        except FakeClusterError:
            pass  # the exception in flight says more

    # -- what a test uses --------------------------------------------------

    @property
    def bootstrap(self) -> str:
        """``host:port,...`` of every broker, for ``bootstrap.servers``."""
        if self._bootstrap is None:
            raise FakeClusterError("the cluster is not started")
        return self._bootstrap

    @property
    def pid(self) -> int:
        """The process id of ``kafka-protocol fake``."""
        if self._process is None:
            raise FakeClusterError("the cluster is not started")
        return self._process.pid

    @property
    def running(self) -> bool:
        """Whether the cluster's process is running."""
        return self._process is not None and self._process.poll() is None

    def control(self, command: Union[str, Mapping[str, Any]], **fields: Any) -> Dict[str, Any]:
        """Sends one control command and returns its answer's fields.

        ``control("move-leader", topic="orders", partition=0)`` and
        ``control({"cmd": "move-leader", "topic": "orders", "partition": 0})``
        are the same. The commands and their fields are those of
        ``kafka-protocol fake --control`` (docs/fake-cluster.md). A refused
        command raises :class:`ControlError` with the cluster's message.
        """
        message: Dict[str, Any] = {"cmd": command} if isinstance(command, str) else dict(command)
        message.update(fields)
        if "cmd" not in message:
            raise ValueError("a control command needs `cmd`")
        process = self._process
        if process is None or process.stdin is None or self._bootstrap is None:
            raise FakeClusterError("the cluster is not started")
        with self._lock:
            message["id"] = next(self._ids)
            try:
                process.stdin.write(json.dumps(message) + "\n")
                process.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                raise self._gone() from None
            try:
                line = self._answers.get(timeout=self._control_timeout)
            except queue.Empty:
                raise FakeClusterError(
                    f"no answer to {message['cmd']} in {self._control_timeout} s"
                ) from None
            if line is None:
                raise self._gone()
        answer = json.loads(line)
        if not isinstance(answer, dict) or answer.get("id") != message["id"]:
            raise FakeClusterError(f"an answer out of turn: {line}")
        if "error" in answer:
            raise ControlError(str(answer["error"]), message)
        answer.pop("id", None)
        answer.pop("ok", None)
        return answer

    def fault(self, spec: str) -> Optional[int]:
        """Injects a fault from now on (a ``--fault`` spec). A request fault
        answers its control id, for ``control("remove", control=id)``."""
        control = self.control("fault", spec=spec).get("control")
        return int(control) if control is not None else None

    def injected(self) -> Dict[str, int]:
        """The faults injected so far, by kind: ``error``, ``delay``, ``hang``,
        ``drop-before``, ``drop-after``, ``move-leaders``,
        ``move-coordinator``, ``stop-broker``, ``restart-broker``, and
        ``drop-after-records``."""
        return {str(k): int(v) for k, v in self.control("counts")["faults"].items()}

    def __repr__(self) -> str:
        state = "running" if self.running else ("stopped" if self._process else "not started")
        return f"FakeCluster(bootstrap={self._bootstrap!r}, {state})"

    # -- the child's pipes -------------------------------------------------

    def _read_stdout(self, stream: IO[str]) -> None:
        for line in stream:
            self._answers.put(line.rstrip("\n"))
        self._answers.put(None)

    def _read_stderr(self, stream: IO[str]) -> None:
        for line in stream:
            line = line.rstrip("\n")
            if line.startswith("faults "):
                self._counts_line = line
            self._stderr.append(line)

    def _stderr_text(self) -> str:
        return "\n".join(self._stderr)

    def _error_message(self, fallback: str) -> str:
        """The command's own error: its ``error:`` line and what follows,
        without clap's closing hint."""
        lines = list(self._stderr)
        for i, line in enumerate(lines):
            if line.startswith("error:"):
                kept = [l for l in lines[i:] if l.strip() and not l.startswith("For more information")]
                return "\n".join(kept)
        return fallback + (": " + self._stderr_text() if self._stderr else "")

    def _gone(self) -> FakeClusterError:
        returncode = self._finish(timeout=5.0)
        return FakeClusterError(
            self._error_message(f"kafka-protocol fake has exited (exit status {returncode})"),
            returncode=returncode,
            stderr=self._stderr_text(),
        )

    def _finish(self, timeout: float) -> Optional[int]:
        """Ends the input (the child stops on it), waits, then terminates
        and kills if it must; reads its pipes to the end."""
        process = self._process
        if process is None:
            return None
        if process.stdin is not None and not process.stdin.closed:
            try:
                process.stdin.close()
            except OSError:
                pass
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        for reader in self._readers:
            reader.join(timeout=timeout)
        return process.returncode

    def _kill(self) -> None:
        process = self._process
        if process is not None and process.poll() is None:
            process.kill()
            process.wait()
