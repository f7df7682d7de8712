# The bundled AppWorld world's code runner: one per episode. It executes the agent's code cells
# in one persistent namespace and forwards every `apis.<app>.<api>(**kwargs)` to the workbench,
# which holds the apps' state, over one JSON message per line.
#
# `python3 -I -c <this>` serves one episode on stdin/stdout. `python3 -I -c <this> --zygote` is a
# fork server: it starts once per sandbox and, for each episode, forks a clean child that serves
# the episode on a socket the workbench passes it (SCM_RIGHTS over the control socket on fd 0),
# so an episode costs a fork instead of an interpreter start.
import ast, builtins, io, json, linecache, os, sys, traceback

_IN, _OUT = sys.stdin, sys.stdout
ALLOWED_MODULES = {"math", "re", "json", "datetime", "collections", "itertools", "functools", "statistics", "string", "random", "decimal", "fractions", "operator", "copy", "typing", "dataclasses", "calendar", "time"}
BLOCKED_NAMES = {"open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "breakpoint", "input", "exit", "quit", "help", "memoryview", "getattr", "setattr", "delattr", "__builtins__", "__loader__", "__spec__"}
# attributes that reach frames, or look names up or evaluate text by string (a way round this check)
BLOCKED_ATTRS = {"f_globals", "f_locals", "f_back", "gi_frame", "gi_code", "cr_frame", "ag_frame", "tb_frame", "tb_next",
                 "attrgetter", "methodcaller", "get_type_hints", "ForwardRef", "Formatter", "get_field",
                 # modules an allowed module imported for itself (`typing.sys`, `dataclasses.inspect`)
                 "sys", "os", "modules", "builtins", "inspect", "subprocess", "importlib"}
# private and dunder attributes are refused (`print.__self__`, `random._os`, `x.__class__`) but for
# these few, which reach nothing
ALLOWED_PRIVATE_ATTRS = {"__init__", "__name__", "__doc__", "__len__", "__str__", "__repr__"}


def send(msg):
    _OUT.write(json.dumps(msg) + "\n")
    _OUT.flush()


def receive():
    line = _IN.readline()
    if not line:
        sys.exit(0)
    return json.loads(line)


class _Api:
    def __init__(self, app, api):
        self._app, self._api = app, api

    def __call__(self, *args, **kwargs):
        if args:
            raise TypeError(f"apis.{self._app}.{self._api}() takes keyword arguments only, e.g. {self._api}(name=value)")
        try:
            json.dumps(kwargs)
        except TypeError as e:
            raise TypeError(f"apis.{self._app}.{self._api}(): arguments must be JSON values ({e})") from None
        send({"op": "call", "app": self._app, "api": self._api, "kwargs": kwargs})
        reply = receive()
        if reply.get("ok"):
            return reply.get("result")
        raise Exception(reply.get("error", "the call failed"))


class _App:
    def __init__(self, app):
        self._app = app

    def __getattr__(self, api):
        if api.startswith("_"):
            raise AttributeError(api)
        return _Api(self._app, api)


class _Apis:
    def __getattr__(self, app):
        if app.startswith("_"):
            raise AttributeError(app)
        return _App(app)


def unsafe(tree):
    """The first unsafe construct in the cell, as the message to raise, or None."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            bad = sorted({n.split(".")[0] for n in names if n.split(".")[0] not in ALLOWED_MODULES})
            if bad:
                return "Usage of the following module(s) is not allowed: " + ", ".join(bad) + "."
            if isinstance(node, ast.ImportFrom):
                if any(a.name == "*" for a in node.names):
                    # a star import would bring in names the checks below refuse by name
                    # (`from operator import *` gives attrgetter)
                    return "Usage of `from " + (node.module or "") + " import *` is not allowed: import the names you need."
                names = [a.name for a in node.names if a.name in BLOCKED_ATTRS or a.name.startswith("_")]
                if names:
                    return "Usage of the following name(s) is not allowed: " + ", ".join(names) + "."
        elif isinstance(node, ast.Name) and node.id in BLOCKED_NAMES:
            return f"Usage of the following function or name is not allowed: {node.id}."
        elif isinstance(node, ast.Attribute) and (node.attr in BLOCKED_ATTRS or (node.attr.startswith("_") and node.attr not in ALLOWED_PRIVATE_ATTRS)):
            return f"Usage of the following attribute is not allowed: {node.attr}."
    return None


# Printed output and tracebacks kept per cell; the workbench shows at most 20,000 characters
# and says when it cut, so more than this is never shown and is not kept either.
MAX_KEPT_CHARS = 100_000


class _CappedOutput(io.TextIOBase):
    """A cell's stdout and stderr: keeps the first MAX_KEPT_CHARS characters, drops the rest."""

    def __init__(self):
        self._parts, self._size = [], 0

    def writable(self):
        return True

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError(f"write() argument must be str, not {type(s).__name__}")
        room = MAX_KEPT_CHARS - self._size
        if room > 0:
            self._parts.append(s[:room])
        self._size += len(s)  # everything written counts; only the first MAX_KEPT_CHARS are kept
        return len(s)

    def getvalue(self):
        text = "".join(self._parts)
        return text + "\n[output truncated]" if self._size > MAX_KEPT_CHARS else text


def serve():
    namespace = {"__name__": "__main__", "apis": _Apis()}
    safe_builtins = {k: v for k, v in vars(builtins).items() if k not in BLOCKED_NAMES}
    safe_builtins["__import__"] = builtins.__import__  # reached only through checked import statements
    namespace["__builtins__"] = safe_builtins
    while True:
        request = receive()
        code = request.get("code", "")
        filename = "<python-input>"
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        buffer = _CappedOutput()
        failed = None
        sys.stdout = sys.stderr = buffer
        try:
            tree = ast.parse(code, filename)
            problem = unsafe(tree)
            if problem:
                raise Exception(problem)
            exec(compile(tree, filename, "exec"), namespace)
        except SystemExit:
            failed = "Exception: exit() is not allowed.\n"
        except BaseException as e:
            frames = [f for f in traceback.extract_tb(e.__traceback__) if f.filename == filename]
            lines = traceback.format_list(frames)
            if isinstance(e, SyntaxError):
                lines = []
            failed = "".join(lines) + "".join(traceback.format_exception_only(type(e), e))
        finally:
            sys.stdout, sys.stderr = _OUT, sys.__stderr__
        if failed is not None and len(failed) > MAX_KEPT_CHARS:
            failed = failed[:MAX_KEPT_CHARS] + "\n[traceback truncated]"
        send({"op": "done", "output": buffer.getvalue(), "error": failed})


def private_scratch():
    """Give this process its own /tmp, /dev/shm and IPC namespace, then drop every capability.
    Each runner calls it right after the fork, before it reads a cell: files and System V or
    POSIX IPC objects an earlier episode left in the sandbox are out of its sight, and what it
    leaves goes with it. The fork server holds CAP_SYS_ADMIN in the sandbox's own user namespace
    (nowhere else) for this step only; a runner keeps none."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)

    def check(result, what):
        if result != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"{what}: {os.strerror(err)}")

    CLONE_NEWNS, CLONE_NEWIPC = 0x00020000, 0x08000000
    MS_NOSUID, MS_NODEV, MS_PRIVATE, MS_REC = 0x2, 0x4, 0x40000, 0x4000
    check(libc.unshare(CLONE_NEWNS | CLONE_NEWIPC), "unshare")
    check(libc.mount(b"none", b"/", None, MS_REC | MS_PRIVATE, None), "making mounts private")
    for path, inodes in ((b"/tmp", 16384), (b"/dev/shm", 4096)):
        options = b"size=64m,nr_inodes=%d,mode=1777" % inodes
        check(libc.mount(b"tmpfs", path, b"tmpfs", MS_NOSUID | MS_NODEV, options), "mounting " + path.decode())

    class Header(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class Data(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    check(libc.capset(ctypes.byref(Header(0x20080522, 0)), (Data * 2)()), "dropping capabilities")
    with builtins.open("/proc/self/status") as f:
        caps = {k: v.strip() for k, v in (line.split(":", 1) for line in f if line.startswith("Cap"))}
    if any(int(caps.get(k, "1"), 16) for k in ("CapEff", "CapPrm", "CapInh", "CapAmb")):
        raise OSError(f"capabilities remain: {caps}")


def zygote():
    """Fork one clean runner per episode, each with a private /tmp, /dev/shm and IPC namespace.
    Control messages (one per packet on fd 0): `spawn` with the episode's socket attached -> the
    child's pid; `sweep` -> kill every process of this sandbox that was not here when the fork
    server started, then `ok`. It answers `ready` at start only once a test runner got its
    private scratch; otherwise it says why, and the workbench starts one sandbox per episode."""
    import signal, socket
    control = socket.socket(fileno=0)
    probe = os.fork()
    if probe == 0:
        try:
            private_scratch()
            os._exit(0)
        except BaseException as e:
            os.write(2, str(e).encode())
            os._exit(1)
    _, status = os.waitpid(probe, 0)
    if status != 0:
        control.send(b"no private scratch for runners")
        os._exit(0)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps ended runners

    def pids():
        return {int(p) for p in os.listdir("/proc") if p.isdigit()}

    keep = pids()  # the sandbox's own processes (its init, the watchdog) and this one
    control.send(b"ready")
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, 64, 1)
        except OSError:
            os._exit(0)
        if not message:
            os._exit(0)
        if message == b"spawn" and fds:
            pid = os.fork()
            if pid == 0:
                global _IN, _OUT
                control.close()
                try:
                    private_scratch()
                except BaseException:
                    os._exit(1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.setsid()
                os.dup2(fds[0], 0)
                os.dup2(fds[0], 1)
                os.close(fds[0])
                _IN = sys.stdin = os.fdopen(0, "r", encoding="utf-8")
                _OUT = sys.stdout = os.fdopen(1, "w", encoding="utf-8")
                try:
                    serve()
                finally:
                    os._exit(0)
            for fd in fds:
                os.close(fd)
            control.send(str(pid).encode())
        elif message == b"sweep":
            for fd in fds:
                os.close(fd)
            for _ in range(3):  # a process forked during the sweep is caught by the next round
                for pid in pids() - keep:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except OSError:
                        pass
            control.send(b"ok")
        else:
            for fd in fds:
                os.close(fd)
            control.send(b"unknown")


if "--zygote" in sys.argv[1:]:
    zygote()
else:
    serve()
