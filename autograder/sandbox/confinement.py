"""The worker's fences, applied after it imported PyTorch and before any student code (Linux only;
docs/security.md: the fences)."""

from __future__ import annotations

import contextlib
import ctypes
import os
import platform
import struct
import sys

from autograder.sandbox import oslayer

_PR_CAPBSET_DROP = 24
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_EPERM = 1


def _libc():
    return ctypes.CDLL(None, use_errno=True)


# -- seccomp ---------------------------------------------------------------------------------
# (AUDIT_ARCH, syscall numbers) per architecture. Numbers from the kernel's syscall tables.
_ARCH = {
    "x86_64": (0xC000003E, dict(kill=62, tkill=200, tgkill=234, rt_sigqueueinfo=129,
                                rt_tgsigqueueinfo=297, ptrace=101, process_vm_readv=310,
                                process_vm_writev=311, prlimit64=302, socket=41, fcntl=72, ioctl=16)),
    "aarch64": (0xC00000B7, dict(kill=129, tkill=130, tgkill=131, rt_sigqueueinfo=138,
                                 rt_tgsigqueueinfo=240, ptrace=117, process_vm_readv=270,
                                 process_vm_writev=271, prlimit64=261, socket=198, fcntl=25, ioctl=29)),
}
_COMMON = dict(pidfd_send_signal=424, pidfd_getfd=438)  # same number on every architecture

# Refused; allowed only when the target (first argument) is this process (pid, 0 or -pid); refused
# for these commands (second argument) only.
_REFUSED = ("tkill", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_send_signal", "pidfd_getfd",
            "socket")
_OWN_TARGET_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "prlimit64")
_F_SETOWN, _F_SETSIG, _F_SETOWN_EX = 8, 10, 15
_FIOSETOWN, _SIOCSPGRP = 0x8901, 0x8902
_REFUSED_COMMANDS = {"fcntl": (_F_SETOWN, _F_SETSIG, _F_SETOWN_EX), "ioctl": (_FIOSETOWN, _SIOCSPGRP)}

_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000


def _seccomp_program(arch: int, numbers: dict[str, int], own_pid: int) -> list[tuple[int, int, int, int]]:
    """Classic BPF over ``struct seccomp_data`` (nr @0, arch @4, args[0] low @16, args[1] low @24)."""
    deny, allow, check_target = "deny", "allow", "check_target"
    program: list[tuple] = [
        (_LD_W_ABS, 0, 0, 4), (_JEQ_K, 0, deny, arch),          # a foreign ABI (i386 on x86_64): refuse
        (_LD_W_ABS, 0, 0, 0), (_JGE_K, deny, 0, 0x40000000),    # the x32 ABI: refuse
    ]
    program += [(_JEQ_K, deny, 0, numbers[name]) for name in _REFUSED]
    program += [(_JEQ_K, check_target, 0, numbers[name]) for name in _OWN_TARGET_ONLY]
    program += [(_JEQ_K, f"check_{name}", 0, numbers[name]) for name in _REFUSED_COMMANDS]
    program += [(_RET_K, 0, 0, _RET_ALLOW)]
    for name, commands in _REFUSED_COMMANDS.items():
        # The command is an unsigned int: the kernel compares its low 32 bits.
        program += [f"check_{name}", (_LD_W_ABS, 0, 0, 24)]
        program += [(_JEQ_K, deny, 0, command) for command in commands]
        program += [(_RET_K, 0, 0, _RET_ALLOW)]
    program += [check_target, (_LD_W_ABS, 0, 0, 16),  # pid_t is 32 bits: the kernel reads the low word
                (_JEQ_K, allow, 0, own_pid), (_JEQ_K, allow, 0, 0), (_JEQ_K, allow, 0, (-own_pid) & 0xFFFFFFFF),
                deny, (_RET_K, 0, 0, _RET_ERRNO | _EPERM),
                allow, (_RET_K, 0, 0, _RET_ALLOW)]
    labels, code = {}, []
    for item in program:  # labels become relative jumps
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)

    def jump(target, at: int) -> int:
        return labels[target] - at - 1 if isinstance(target, str) else target

    return [(op, jump(jt, at), jump(jf, at), k) for at, (op, jt, jf, k) in enumerate(code)]


def install_seccomp() -> bool:
    """Also in a stage's copy of a confined worker: signals only to that copy from then on."""
    known = _ARCH.get(platform.machine())
    if known is None:
        return False
    arch, numbers = known
    code = _seccomp_program(arch, {**numbers, **_COMMON}, os.getpid())
    raw = b"".join(struct.pack("<HBBI", op, jt, jf, k) for op, jt, jf, k in code)
    buffer = ctypes.create_string_buffer(raw, len(raw))

    class SockFprog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    prog = SockFprog(len(code), ctypes.addressof(buffer))
    return _libc().prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) == 0


# -- Landlock --------------------------------------------------------------------------------
_SYS_CREATE_RULESET, _SYS_ADD_RULE, _SYS_RESTRICT_SELF = 444, 445, 446  # same on every arch
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_VERSION_FLAG = 1
_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_TRUNCATE, _REFER = 1 << 14, 1 << 13
_CHANGE_TREE = sum(1 << bit for bit in (4, 5, 6, 7, 8, 9, 10, 11, 12))  # remove / make dir, file, link...
_READ = _EXECUTE | _READ_FILE | _READ_DIR
_FILE_ONLY = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE  # the rights a rule on a file may carry
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1
# System folders the interpreter and PyTorch read (shared libraries, the loader's cache,
# CPU topology, /proc/self); nothing of the grader's or of a user's lives there.
_SYSTEM_READ = ("/usr", "/lib", "/lib64", "/lib32", "/bin", "/sbin", "/etc", "/proc", "/sys", "/opt/conda")
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
PACKAGE = "autograder"
PACKAGE_VISIBLE = ("__init__.py", "sandbox")  # what the worker itself runs; the rest is the grader's


def readable_paths(package_parent: str) -> list[str]:
    """The system, the Python install and ``sys.path``; of the grader's package only :data:`PACKAGE_VISIBLE`."""
    parent = os.path.realpath(package_parent)
    candidates = [*_SYSTEM_READ, sys.prefix, sys.base_prefix, sys.exec_prefix, *(p for p in sys.path if p)]
    paths = sorted({os.path.realpath(p) for p in candidates if os.path.isdir(p)} - {""})
    paths = [p for p in paths if not (parent == p or parent.startswith(p.rstrip(os.sep) + os.sep))]
    # site-packages, not this repository's checkout (answers and tests beside the package)
    if not any(os.path.exists(os.path.join(parent, m)) for m in ("solutions", "tests", "pyproject.toml", ".git")):
        with contextlib.suppress(OSError):
            paths += [os.path.join(parent, e) for e in sorted(os.listdir(parent)) if e != PACKAGE]
    return paths + [os.path.join(parent, PACKAGE, e) for e in PACKAGE_VISIBLE]


def _add_path_rule(libc, ruleset: int, path: str, access: int) -> bool:
    """False only when the kernel refused a rule it should take (then no fence is claimed)."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        return True  # nothing there: nothing to allow
    try:
        if not os.path.isdir(path):
            access &= _FILE_ONLY
        beneath = struct.pack("<Qi", access, fd)  # struct landlock_path_beneath_attr (packed)
        return libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, beneath, 0) == 0
    finally:
        os.close(fd)


def _install_landlock(writable: str, package_parent: str, extra_devices: tuple[str, ...] = ()) -> dict:
    """Reads as :func:`readable_paths` says, writes beneath ``writable``, no TCP (ABI 4+), no signals out (ABI 6+)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = libc.syscall(_SYS_CREATE_RULESET, None, 0, _VERSION_FLAG)
    if abi < 1:
        return {}
    handled = _READ | _WRITE_FILE | _CHANGE_TREE | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    handled_net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0
    # struct landlock_ruleset_attr {u64 handled_access_fs, handled_access_net, scoped}: older
    # kernels take a shorter struct, so the size matches the ABI.
    attr = struct.pack("<QQQ", handled, handled_net, scoped)[: 8 if abi < 4 else 16 if abi < 6 else 24]
    ruleset = libc.syscall(_SYS_CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        return {}
    device_access = _READ_FILE | _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0)
    rules = [(writable, handled), *[(p, _READ) for p in readable_paths(package_parent)],
             *[(d, device_access) for d in (*_DEVICES, *extra_devices)]]
    try:
        if not all(_add_path_rule(libc, ruleset, path, access & handled) for path, access in rules):
            return {}
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            return {}
    finally:
        os.close(ruleset)
    return {"landlock_abi": abi, "files": True, "tcp": bool(handled_net), "signals": bool(scoped)}


# unshare / mount flags (linux/sched.h, linux/mount.h)
_CLONE_NEWNS = 0x00020000
_MS_NOSUID, _MS_NODEV, _MS_NOEXEC, _MS_REC, _MS_PRIVATE = 2, 4, 8, 0x4000, 1 << 18


def _private_proc() -> bool:
    """A ``/proc`` showing only what the worker may trace, in a mount namespace of its own (root,
    Linux 5.8+; before Landlock, which forbids mounting)."""
    if os.geteuid() != 0:
        return False
    libc = _libc()
    if libc.unshare(_CLONE_NEWNS) != 0:  # also refused while the process has other threads
        return False
    # Private first: a mount in a namespace copied from a shared one would propagate back to
    # the grader's (the machine's) /proc.
    if libc.mount(b"none", b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        return False
    # hidepid spares members of the gid= group (root's group by default): name one the worker
    # is not in, so a worker running as root (gid 0) is not exempt.
    own = {os.getgid(), os.getegid(), *os.getgroups()}
    outsider = next(g for g in range(65533, 0, -1) if g not in own)
    options = f"hidepid=invisible,gid={outsider}".encode()
    return libc.mount(b"proc", b"/proc", b"proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, options) == 0


def _drop_capabilities() -> bool:
    """Root keeps its capabilities under no_new_privs: drop them all."""
    if os.geteuid() != 0:
        return True
    libc = _libc()
    for cap in range(64):
        if libc.prctl(_PR_CAPBSET_DROP, cap, 0, 0, 0) != 0 and ctypes.get_errno() != 22:  # EINVAL: no such cap
            return False
    header = struct.pack("<Ii", 0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = bytes(24)  # two struct __user_cap_data_struct {effective, permitted, inheritable}, all zero
    return libc.capset(header, data) == 0


def confine(writable: str, package_parent: str, devices: tuple[str, ...] = (), fences: bool = True) -> dict:
    """Apply every fence this system offers (none with ``fences=False``); which ones hold, for the report."""
    if not fences or not oslayer.is_linux():
        return {"platform": sys.platform}
    # Required to install either fence without privileges; it also stops set-uid programs.
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return {"platform": sys.platform}
    private_proc = _private_proc()
    landlock = _install_landlock(writable, package_parent, devices)
    # hidepid hides what the reader may not trace; only Landlock makes that "outside its domain"
    return {"platform": sys.platform, "landlock": landlock, "processes": private_proc and bool(landlock.get("files")),
            "capabilities_dropped": _drop_capabilities(), "seccomp": install_seccomp()}


def describe(fences: dict | None) -> str:
    """The fences in force, in words every report shows: 'unconfined' when there are none."""
    fences = fences or {}
    names = []
    landlock = fences.get("landlock") or {}
    if landlock.get("files"):
        names.append(f"landlock abi {landlock.get('landlock_abi')}: reads and writes fenced"
                     + (", no TCP" if landlock.get("tcp") else "") + (", signals scoped" if landlock.get("signals") else ""))
    if fences.get("seccomp"):
        names.append("seccomp: no sockets, signals to itself only, no ptrace, no F_SETOWN/F_SETSIG")
    if fences.get("capabilities_dropped") and landlock.get("files"):
        names.append("no capabilities")
    if landlock.get("files"):  # the process list: fenced only as root (see _private_proc)
        names.append("/proc: its own processes only" if fences.get("processes")
                     else "/proc: other processes visible (a private /proc needs root with CAP_SYS_ADMIN, Linux 5.8+)")
    group = fences.get("cgroup") or {}
    if held := [f"{group[key]} {what}" for key, what in (("memory", "of memory"), ("tasks", "tasks")) if group.get(key)]:
        names.append(f"cgroup {group.get('version', '')}: " + " and ".join(held) + " for the worker and all it starts")
    if limits := fences.get("limits"):
        names.append("limits: " + ", ".join(f"{k} {v}" for k, v in sorted(limits.items())))
    fenced = landlock.get("files") or fences.get("seccomp")
    return "; ".join(names) if fenced else "unconfined" + (f" ({'; '.join(names)})" if names else "")


def is_confined(fences: dict | None) -> bool:
    """Both fences the grading's trust rests on: Landlock on files and seccomp."""
    fences = fences or {}
    return bool((fences.get("landlock") or {}).get("files") and fences.get("seccomp"))
