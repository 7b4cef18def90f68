"""One persistent connection per node: commands, log streams and the Docker API all share it.

SSH nodes use asyncssh with host keys verified against known_hosts (strict by default;
`accept-new` adds unknown keys, never changed ones). The node spark-tui runs on uses a
local transport with the same interface. Remote commands are always argument lists,
quoted with shlex and read by POSIX sh (SH_READ), whatever the user's login shell is.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import os
import secrets
import shlex
import shutil
import signal
import socket
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import asyncssh

from spark_tui.core.node import engines
from spark_tui.core.node.backoff import reconnect_delay
from spark_tui.core.node.errors import HostKeyError, NodeError
from spark_tui.parsers.text import inert
from spark_tui.settings.resolve import NodeConfig

PREFERRED_CIPHERS = [
    "aes128-gcm@openssh.com",
    "aes256-gcm@openssh.com",
    "aes128-ctr",
    "aes256-ctr",
    "chacha20-poly1305@openssh.com",
]


# What the SSH exec request carries for every command: POSIX sh, reading the command as the first
# line of its stdin (`read` takes one byte at a time, so the rest of stdin is the command's). sshd
# hands an exec request to the user's login shell, which may be tcsh or fish: this text means the
# same in each of them, and the argument list's shlex quoting is read by sh, the shell it is for.
SH_READ = "sh -c 'IFS= read -r c && eval \"$c\"'"


def command_line(argv: list[str]) -> str:
    """`argv` as one line of sh for SH_READ: shlex-quoted, `exec`ed (the program replaces sh), a
    newline in an argument (shlex leaves it inside single quotes) written as "$nl"."""
    text = "exec " + shlex.join(argv)
    if "\n" in text:
        text = "nl=$(printf '\\nx'); nl=${nl%x}; " + text.replace("\n", "'\"$nl\"'")
    return text + "\n"


# What a shell answers for a program it cannot run (POSIX): a remote command over SSH gets these
# from the node's shell, a local one from _spawn_failed, so callers read both the same way.
NOT_FOUND, NOT_EXECUTABLE = 127, 126


@dataclass
class Result:
    stdout: str
    stderr: str
    exit_status: int
    signal: str | None = None  # the signal that ended the program (KILL, TERM), None when it exited

    def problem(self, program: str) -> str | None:
        """Why `program` did not run to its end, in the operator's words, or None when it did
        (whatever its exit code): missing, not executable, or killed are facts to report."""
        if self.signal:
            return f"{program} was killed (SIG{self.signal.removeprefix('SIG')}) on this node"
        if self.exit_status == NOT_FOUND:
            return f"no {program} on this node"
        if self.exit_status == NOT_EXECUTABLE:
            return f"{program} is not executable on this node"
        return None


def _spawn_failed(argv: list[str], exc: OSError) -> Result:
    """A local program that could not be started, answered as a shell answers it over SSH."""
    missing = isinstance(exc, FileNotFoundError)
    code = NOT_FOUND if missing else NOT_EXECUTABLE
    what = "not found" if missing else exc.strerror or "cannot be run"
    return Result("", f"{argv[0]}: {what}", code)


def _local_result(out: bytes, err: bytes, returncode: int | None) -> Result:
    """A local process's end: a negative return code is the signal that killed it."""
    if returncode is not None and returncode < 0:
        try:
            name = signal.Signals(-returncode).name.removeprefix("SIG")
        except ValueError:  # a real-time signal has no name
            name = str(-returncode)
        return Result(out.decode(errors="replace"), err.decode(errors="replace"), 128 - returncode, name)
    code = returncode if returncode is not None else 255
    return Result(out.decode(errors="replace"), err.decode(errors="replace"), code)


class Transport(Protocol):
    """How spark-tui reaches a node: commands, probe scripts and its Docker engine's socket."""

    kind: str  # local | ssh
    node: NodeConfig
    rtt_ms: float | None
    next_retry: float  # monotonic time before which no reconnect is tried (0: any time)

    @property
    def connected(self) -> bool: ...

    async def connect(self) -> None: ...

    async def run(self, argv: list[str], stdin: str | None = None, timeout: float | None = 30) -> Result: ...

    async def run_script(
        self, script: str, args: tuple[str, ...] = (), timeout: float | None = 30
    ) -> str: ...

    async def stream(
        self, argv: list[str], on_err_line: Callable[[str], object], stdin: str | Awaitable[str] = ""
    ) -> Result:
        """Run a long command, handing each line of its stderr to `on_err_line` as it comes
        (progress); stdout is collected. `stdin` is written, then closed; given as an awaitable it
        is written when it is ready, so the command can start before its input is known.
        Cancelling the call closes the command's session."""
        ...

    async def docker_url(self) -> str: ...

    async def http_base(self, host: str, port: int) -> tuple[str, asyncssh.SSHListener | None]:
        """A URL reaching host:port as the node sees it, and the forward to close afterwards."""
        ...

    async def close(self) -> None: ...


async def _input(stdin: str | Awaitable[str]) -> str:
    return stdin if isinstance(stdin, str) else await stdin


class LocalTransport:
    """This machine, without SSH."""

    kind = "local"

    def __init__(self, node: NodeConfig):
        self.node = node
        self.rtt_ms: float | None = 0.0
        self.next_retry = 0.0  # never waits: nothing to reconnect

    @property
    def connected(self) -> bool:
        return True

    async def connect(self) -> None:
        return None

    async def run(self, argv: list[str], stdin: str | None = None, timeout: float | None = 30) -> Result:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:  # missing or not executable: a fact about the node, not a crash
            return _spawn_failed(argv, exc)
        try:
            out, err = await asyncio.wait_for(
                proc.communicate(stdin.encode() if stdin is not None else None), timeout
            )
        except (TimeoutError, asyncio.CancelledError):
            proc.kill()  # as a closed SSH session ends its command
            raise
        return _local_result(out, err, proc.returncode)

    async def run_script(self, script: str, args: tuple[str, ...] = (), timeout: float | None = 30) -> str:
        return (await self.run(["sh", "-c", script, "sh", *args], timeout=timeout)).stdout

    async def stream(
        self, argv: list[str], on_err_line: Callable[[str], object], stdin: str | Awaitable[str] = ""
    ) -> Result:
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
        except OSError as exc:
            failed = _spawn_failed(argv, exc)
            on_err_line(failed.stderr)
            return failed
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        pipe = proc.stdin

        async def feed() -> None:
            try:
                data = (await _input(stdin)).encode()
                with contextlib.suppress(OSError):  # the command has ended
                    pipe.write(data)
            finally:
                pipe.close()

        feeder = asyncio.ensure_future(feed())
        try:
            out_task = asyncio.ensure_future(proc.stdout.read())
            err = []
            async for raw in proc.stderr:
                line = raw.decode(errors="replace").rstrip("\n")
                err.append(line)
                on_err_line(line)
            out = await out_task
            code = await proc.wait()
        except asyncio.CancelledError:
            proc.kill()
            raise
        finally:
            feeder.cancel()
        return _local_result(out, "\n".join(err[-50:]).encode(), code)

    async def docker_url(self) -> str:
        return f"unix://{self.node['docker_socket']}"

    async def http_base(self, host: str, port: int) -> tuple[str, asyncssh.SSHListener | None]:
        return f"http://{host}:{port}", None

    async def close(self) -> None:
        return None


class SshTransport:
    kind = "ssh"

    def __init__(self, node: NodeConfig):
        self.node = node
        self.conn: asyncssh.SSHClientConnection | None = None
        self._lock = asyncio.Lock()
        self._sessions = asyncio.Semaphore(node["max_sessions"])
        self._docker_sock: str | None = None
        self._shell: asyncssh.SSHClientProcess | None = (
            None  # long-lived `sh` for probe scripts: no login shell per refresh
        )
        self._marker = ""
        self._functions: dict[str, str] = {}  # script -> the shell function defined for it
        self._shell_lock = asyncio.Lock()
        self._listener: asyncssh.SSHListener | None = None
        self.rtt_ms: float | None = None
        self.last_error: str | None = None
        self.failures = 0
        self.next_retry: float = 0.0

    @property
    def connected(self) -> bool:
        return self.conn is not None and not self.conn.is_closed()

    def live(self) -> asyncssh.SSHClientConnection:
        """The open connection (call after connect())."""
        if self.conn is None:
            raise NodeError(self.node.name, "not connected")
        return self.conn

    @property
    def host(self) -> str:
        return self.node["host"]

    async def connect(self) -> None:
        async with self._lock:
            if self.connected:
                return
            if self.conn is not None:
                # Closed under us (sshd restarted, a blip): the docker tunnel and the probe shell
                # went with it, and must be made again on the new connection, not reused.
                await self._drop()
            if time.monotonic() < self.next_retry:
                raise NodeError(
                    self.node.name, f"{self.last_error} (retry in {self.next_retry - time.monotonic():.0f} s)"
                )
            try:
                self.conn = await self._open()
                self.failures = 0
                self.last_error = None
            except NodeError as exc:
                self._backoff(exc.reason)
                raise
            except (TimeoutError, OSError, asyncssh.Error) as exc:
                reason = _reason(exc)
                self._backoff(reason)
                raise NodeError(self.node.name, f"cannot connect to {self.host}: {reason}") from None

    def _backoff(self, reason: str) -> None:
        self.failures += 1
        self.last_error = reason
        self.next_retry = time.monotonic() + reconnect_delay(self.failures)

    def _options(self, **extra) -> dict:
        n = self.node
        opts = dict(
            # AES-GCM first: asyncssh builds a new cipher context for every chacha20 packet, which
            # cost ~5 ms of client CPU per node per refresh; GCM keeps one (and uses AES-NI/ARMv8 AES).
            encryption_algs=PREFERRED_CIPHERS,
            known_hosts=os.path.expanduser(n["known_hosts"]),
            connect_timeout=n["connect_timeout"],
            keepalive_interval=n["keepalive_interval"] or None,
            keepalive_count_max=3,
        )
        if n["user"]:
            opts["username"] = n["user"]
        if n["port"]:
            opts["port"] = n["port"]
        if n["identity_file"]:
            opts["client_keys"] = [os.path.expanduser(n["identity_file"])]
        opts.update(extra)
        return opts

    async def _open(self) -> asyncssh.SSHClientConnection:
        self._known_hosts_file()
        try:
            return await asyncssh.connect(self.host, **self._options())
        except asyncssh.HostKeyNotVerifiable:
            return await self._host_key_problem()
        except ValueError as exc:  # asyncssh parses known_hosts (and keys) while connecting
            raise HostKeyError(
                self.node.name,
                f"cannot use known_hosts {self._options()['known_hosts']} "
                f"or the key: {exc}; refusing to connect",
            ) from None

    def _known_hosts_file(self) -> None:
        """A missing known_hosts: accept-new creates it (0600, its directory 0700, as ssh does for
        ~/.ssh); strict mode says the file does not exist rather than "No such file or directory"."""
        path = os.path.expanduser(self.node["known_hosts"])
        if os.path.exists(path):
            return
        if self.node["host_key_policy"] != "accept-new":
            raise HostKeyError(
                self.node.name,
                f"known_hosts {path} does not exist; refusing to connect. Create it with "
                f"ssh-keyscan, or set host_key_policy: accept-new",
            )
        try:
            os.makedirs(os.path.dirname(path) or ".", mode=0o700, exist_ok=True)
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        except FileExistsError:
            pass  # another connection created it meanwhile
        except OSError as exc:
            raise HostKeyError(
                self.node.name, f"cannot create known_hosts {path}: {_reason(exc)}; refusing to connect"
            ) from None

    async def _host_key_problem(self) -> asyncssh.SSHClientConnection:
        """Tell unknown from changed keys, name the fingerprint, and add unknown keys in accept-new mode."""
        n = self.node
        path = os.path.expanduser(n["known_hosts"])
        # known_hosts lists the real host: for an ~/.ssh/config alias, its HostName and Port.
        resolved = await asyncssh.SSHClientConnectionOptions.construct(
            host=self.host, config=(), **self._options()
        )
        host, port = resolved.host, resolved.port
        key = await asyncio.wait_for(
            asyncssh.get_server_host_key(self.host, options=resolved), n["connect_timeout"]
        )
        if key is None:
            raise HostKeyError(n.name, f"{self.host} offered no host key; refusing to connect")
        fingerprint = key.get_fingerprint("sha256")
        entry = host if port == 22 else f"[{host}]:{port}"
        known = await _known_keys(n.name, path, host, port)
        if known:
            raise HostKeyError(
                n.name,
                f"host key for {entry} CHANGED (server offers {fingerprint}); refusing to connect. "
                f"If the change is expected, remove the old entry: ssh-keygen -R {entry} -f {path}",
            )
        if n["host_key_policy"] != "accept-new":
            raise HostKeyError(
                n.name,
                f"host key for {entry} is not in {path} (server offers {fingerprint}); refusing to connect. "
                f"To accept it: ssh-keyscan -p {port} {host} >> {path}, or set host_key_policy: accept-new",
            )
        with open(path, "a+") as fh:
            fh.seek(0)
            # A file of hashed names (HashKnownHosts yes) gets a hashed one: no address in clear.
            hashed = any(line.startswith(HASHED) for line in fh)
            name = _hashed_name(entry) if hashed else entry
            fh.write(f"{name} {key.export_public_key('openssh').decode().strip()}\n")
        return await asyncssh.connect(self.host, **self._options())

    async def run(self, argv: list[str], stdin: str | None = None, timeout: float | None = 30) -> Result:
        await self.connect()
        async with self._sessions:
            try:
                start = time.monotonic()
                proc = await asyncio.wait_for(self._run_once(argv, stdin), timeout)
                self.rtt_ms = (time.monotonic() - start) * 1000
            except (OSError, asyncssh.Error) as exc:
                await self._drop()
                raise NodeError(self.node.name, f"connection lost: {_reason(exc)}") from None
        return Result(
            _text(proc.stdout),
            _text(proc.stderr),
            proc.exit_status if proc.exit_status is not None else 255,
            _signal_name(proc.exit_signal),
        )

    async def _run_once(self, argv: list[str], stdin: str | None) -> asyncssh.SSHCompletedProcess:
        proc = await self.live().create_process(SH_READ)
        try:
            proc.stdin.write(command_line(argv))
            if stdin is not None:
                proc.stdin.write(stdin)
                proc.stdin.write_eof()
            return await proc.wait(check=False)
        finally:
            # On a timeout or a cancel too: asyncssh's own run() leaves the session open and the
            # command running; closing it ends the command's stdin and stdout on the node.
            proc.close()

    async def stream(
        self, argv: list[str], on_err_line: Callable[[str], object], stdin: str | Awaitable[str] = ""
    ) -> Result:
        await self.connect()
        async with self._sessions:
            try:
                proc = await self.live().create_process(SH_READ)
                proc.stdin.write(command_line(argv))

                async def feed() -> None:
                    try:
                        data = await _input(stdin)
                        with contextlib.suppress(OSError, asyncssh.Error):  # the session has ended
                            proc.stdin.write(data)
                    finally:
                        with contextlib.suppress(OSError, asyncssh.Error):
                            proc.stdin.write_eof()

                feeder = asyncio.ensure_future(feed())
                out_task = asyncio.ensure_future(proc.stdout.read())
                err = []
                try:
                    async for line in proc.stderr:
                        line = _text(line).rstrip("\n")
                        err.append(line)
                        on_err_line(line)
                    out = await out_task
                    await proc.wait_closed()
                finally:
                    feeder.cancel()
                    out_task.cancel()  # read already, or never to be: the session ends here
                    if out_task.done() and not out_task.cancelled():
                        out_task.exception()  # a connection's end is said once, by stderr's reader
                    proc.close()  # a cancelled call closes the session (the command sees its end)
            except (OSError, asyncssh.Error) as exc:
                await self._drop()
                raise NodeError(self.node.name, f"connection lost: {_reason(exc)}") from None
        code = proc.exit_status
        return Result(
            _text(out),
            "\n".join(err[-50:]),
            code if code is not None else 255,
            _signal_name(proc.exit_signal),
        )

    async def run_script(self, script: str, args: tuple[str, ...] = (), timeout: float | None = 30) -> str:
        """Run a shell script in the node's long-lived `sh` session and return its stdout.

        An exec channel starts the user's login shell each time (~100 ms of rc files);
        one persistent session pays that once. The script is trusted text of ours, never
        built from settings; values reach it only as `args` ($1, $2, ... and "$@"), quoted.
        The end marker is random (per shell) so output cannot fake it.
        """
        async with self._shell_lock:
            for attempt in (1, 2):
                await self.connect()
                start = time.monotonic()
                try:
                    shell = self._shell
                    if shell is None or shell.stdout.at_eof():
                        shell = self._shell = await self.live().create_process("sh")
                        # Random per shell, not per call: asyncssh compiles a regex for each new
                        # readuntil separator, and one per shell is as unguessable.
                        self._marker = f"__spark_tui_end_{secrets.token_hex(8)}__"
                        self._functions = {}
                    marker = self._marker
                    call = self._call(script) + (" " + shlex.join(args) if args else "")
                    shell.stdin.write(f"{call} </dev/null 2>/dev/null\necho; echo {marker}\n")
                    out = await asyncio.wait_for(shell.stdout.readuntil(marker + "\n"), timeout)
                    break
                except (OSError, asyncssh.Error, asyncio.IncompleteReadError) as exc:
                    # A session that died with its connection: reconnect once, then report.
                    await self._drop()
                    if attempt == 2:
                        raise NodeError(self.node.name, f"connection lost: {_reason(exc)}") from None
                except (TimeoutError, asyncio.CancelledError):
                    # Its output is out of step now (the script may still be printing): close it
                    # and start a fresh one next time.
                    stale, self._shell = self._shell, None
                    if stale is not None:
                        stale.close()
                    raise
            self.rtt_ms = (time.monotonic() - start) * 1000
        return out[: -len(marker) - 1]

    def _call(self, script: str) -> str:
        """The shell text that runs `script`: the first time in this shell it is defined as a
        function, afterwards only the function's name is sent. A refresh then costs one short
        line to send and nothing for the node's shell to parse again."""
        name = self._functions.get(script)
        if name is not None:
            return name
        name = self._functions[script] = f"_spark_tui_{len(self._functions)}"
        return f"{name}() {{\n{script}\n}}\n{name}"

    async def http_base(self, host: str, port: int) -> tuple[str, asyncssh.SSHListener | None]:
        """host:port as the node sees it, through a local port forwarded over this connection."""
        await self.connect()
        try:
            listener = await self.live().forward_local_port("127.0.0.1", 0, host, port)
        except (OSError, asyncssh.Error) as exc:
            raise NodeError(self.node.name, f"port forward to {host}:{port} failed: {_reason(exc)}") from None
        return f"http://127.0.0.1:{listener.get_port()}", listener

    async def docker_url(self) -> str:
        """A local UNIX socket forwarded over this SSH connection to the node's docker socket."""
        await self.connect()
        if self._listener is None or self._docker_sock is None or not os.path.exists(self._docker_sock):
            tmp = tempfile.mkdtemp(prefix="spark-tui-docker-")
            self._docker_sock = os.path.join(tmp, "docker.sock")
            try:
                self._listener = await self.live().forward_local_path(
                    self._docker_sock, self.node["docker_socket"]
                )
            except (OSError, asyncssh.Error) as exc:
                raise NodeError(
                    self.node.name, f"docker tunnel to {self.node['docker_socket']} failed: {_reason(exc)}"
                ) from None
        return f"unix://{self._docker_sock}"

    async def _drop(self) -> None:
        if self.conn is not None:
            self.conn.close()
        self.conn = None
        self._listener = None
        self._shell = None
        if self._docker_sock is not None:
            # The tunnel went with the connection: its Docker client and socket directory too.
            engines.forget(f"unix://{self._docker_sock}")
            shutil.rmtree(os.path.dirname(self._docker_sock), ignore_errors=True)
            self._docker_sock = None

    async def close(self) -> None:
        await self._drop()


async def _known_keys(node: str, path: str, host: str, port: int) -> list:
    """Every key known_hosts holds for this host, by asyncssh's own matching (hashed entries,
    `[host]:port`, patterns, @cert-authority and @revoked markers, the host's address too), so a
    changed key is told from an unknown one whatever the file's format."""
    if not os.path.exists(path):
        return []
    try:
        known = asyncssh.read_known_hosts(path)
    except (OSError, ValueError, asyncssh.Error) as exc:
        # Never read a file we cannot parse as "no entry": accept-new would then add a key.
        raise HostKeyError(node, f"known_hosts {path} cannot be read: {_reason(exc)}") from None
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
        addrs = sorted({str(info[4][0]) for info in infos})
    except OSError:
        addrs = []
    found = []
    for addr in addrs or [""]:
        matched = known.match(host, addr, None if port == 22 else port)
        found += [key for keys in matched for key in keys]
    return found


HASHED = "|1|"  # a hashed known_hosts name: |1|base64(salt)|base64(HMAC-SHA1(salt, name))


def _hashed_name(name: str) -> str:
    """`name` as OpenSSH hashes it in known_hosts (hostfile.c host_hash)."""
    salt = os.urandom(20)
    digest = hmac.new(salt, name.encode(), hashlib.sha1).digest()
    return f"{HASHED}{base64.b64encode(salt).decode()}|{base64.b64encode(digest).decode()}"


def _signal_name(exit_signal: tuple | None) -> str | None:
    """asyncssh's exit_signal (name, core dumped, message, language) as the signal's name."""
    return str(exit_signal[0]) if exit_signal else None


def _text(data: str | bytes | None) -> str:
    """A session's output as text (asyncssh gives str with an encoding set, bytes without)."""
    return data.decode(errors="replace") if isinstance(data, bytes) else data or ""


def _reason(exc: BaseException) -> str:
    if isinstance(exc, asyncio.TimeoutError):
        return "timed out"
    if isinstance(exc, asyncssh.PermissionDenied):
        return "authentication failed (permission denied)"
    if isinstance(exc, OSError) and exc.errno:
        return os.strerror(exc.errno)  # "Connection refused", not asyncio's "Connect call failed (...)"
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror
    # asyncssh's text is the peer's (a DISCONNECT's description): inert, whoever prints it.
    return inert(str(exc)) or type(exc).__name__


def transport_for(node: NodeConfig) -> Transport:
    return LocalTransport(node) if node.local else SshTransport(node)
