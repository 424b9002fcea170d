"""Fences around the worker, applied after it has imported PyTorch and before it runs any
of the student's code. Linux only; elsewhere the worker runs unconfined (see README limits).

* **Signals**: a seccomp filter lets the worker signal only itself (``os.kill(os.getpid())``,
  ``kill(0, ...)``, its own process group), so ``os.kill(os.getppid(), SIGKILL)`` cannot
  stop the grader. ``ptrace``, ``process_vm_readv/writev``, ``pidfd_getfd`` and setting
  another process's resource limits are refused too. Seccomp is in every Linux kernel the
  course supports and needs no privileges.
* **Files**: where the kernel has Landlock (Linux 5.13+), the worker may create, change and
  delete files only under its own scratch folder (and write to devices such as /dev/null
  or a GPU). The submission, the results file and the grader's own code are then out of
  reach. Reading stays allowed everywhere (Python must import modules). Landlock also keeps
  the worker from tracing or, since ABI 6, signalling processes outside its sandbox.

Both are inherited by every process the worker starts and cannot be lifted afterwards.
Without them the grader still holds: it writes the results file last, after ending every
process the submission started, and restores the submission file if it changed; the
worker then merely *could* kill the grader, which leaves the provisional 0-point results.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import sys

_PR_SET_PDEATHSIG = 1
_PR_SET_SECCOMP = 22
_PR_SET_NO_NEW_PRIVS = 38
_SECCOMP_MODE_FILTER = 2
_EPERM = 1


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def die_with_parent(signal_number: int = 9) -> None:
    """The kernel kills this process when the grader dies (even by SIGKILL), so a worker
    stuck in an endless loop never outlives a grader that was stopped from outside."""
    if sys.platform.startswith("linux"):
        _libc().prctl(_PR_SET_PDEATHSIG, signal_number, 0, 0, 0)


# -- seccomp ---------------------------------------------------------------------------------
# (AUDIT_ARCH, syscall numbers) per architecture. Numbers from the kernel's syscall tables.
_ARCH = {
    "x86_64": (0xC000003E, dict(kill=62, tkill=200, tgkill=234, rt_sigqueueinfo=129,
                                rt_tgsigqueueinfo=297, ptrace=101, process_vm_readv=310,
                                process_vm_writev=311, prlimit64=302)),
    "aarch64": (0xC00000B7, dict(kill=129, tkill=130, tgkill=131, rt_sigqueueinfo=138,
                                 rt_tgsigqueueinfo=240, ptrace=117, process_vm_readv=270,
                                 process_vm_writev=271, prlimit64=261)),
}
_COMMON = dict(pidfd_send_signal=424, pidfd_getfd=438)  # same number on every architecture

# Refused whatever the arguments; allowed only when the target (first argument) is this
# process (its pid, 0 = itself / its own group, -pid = its own process group).
_REFUSED = ("tkill", "ptrace", "process_vm_readv", "process_vm_writev", "pidfd_send_signal", "pidfd_getfd")
_OWN_TARGET_ONLY = ("kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "prlimit64")

_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_ERRNO = 0x7FFF0000, 0x00050000


def _seccomp_program(arch: int, numbers: dict[str, int], own_pid: int) -> list[tuple[int, int, int, int]]:
    """A classic-BPF program over ``struct seccomp_data`` (nr @0, arch @4, args[0] low @16)."""
    deny, allow, check_target = "deny", "allow", "check_target"
    program: list[tuple] = [
        (_LD_W_ABS, 0, 0, 4), (_JEQ_K, 0, deny, arch),          # a foreign ABI (i386 on x86_64): refuse
        (_LD_W_ABS, 0, 0, 0), (_JGE_K, deny, 0, 0x40000000),    # the x32 ABI: refuse
    ]
    program += [(_JEQ_K, deny, 0, numbers[name]) for name in _REFUSED]
    program += [(_JEQ_K, check_target, 0, numbers[name]) for name in _OWN_TARGET_ONLY]
    program += [(_RET_K, 0, 0, _RET_ALLOW),
                check_target, (_LD_W_ABS, 0, 0, 16),  # pid_t is 32 bits: the kernel reads the low word
                (_JEQ_K, allow, 0, own_pid), (_JEQ_K, allow, 0, 0), (_JEQ_K, allow, 0, (-own_pid) & 0xFFFFFFFF),
                deny, (_RET_K, 0, 0, _RET_ERRNO | _EPERM),
                allow, (_RET_K, 0, 0, _RET_ALLOW)]
    labels, code = {}, []
    for item in program:  # resolve labels into relative jumps
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)
    resolved = []
    for position, (op, jt, jf, k) in enumerate(code):
        jt = labels[jt] - position - 1 if isinstance(jt, str) else jt
        jf = labels[jf] - position - 1 if isinstance(jf, str) else jf
        resolved.append((op, jt, jf, k))
    return resolved


def _install_seccomp() -> bool:
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
_RULE_PATH_BENEATH = 1
_VERSION_FLAG = 1
_WRITE_FILE, _TRUNCATE, _REFER = 1 << 1, 1 << 14, 1 << 13
_CHANGE_TREE = sum(1 << bit for bit in (4, 5, 6, 7, 8, 9, 10, 11, 12))  # remove / make dir, file, link...
_SCOPE_ABSTRACT_UNIX_SOCKET, _SCOPE_SIGNAL = 1 << 0, 1 << 1


def _landlock_abi(libc) -> int:
    abi = libc.syscall(_SYS_CREATE_RULESET, None, 0, _VERSION_FLAG)
    return abi if abi > 0 else 0


def _install_landlock(writable: str) -> int:
    """Allow changes to the file system only beneath ``writable`` (and writes to devices)."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = _landlock_abi(libc)
    if abi < 1:
        return 0
    handled = _WRITE_FILE | _CHANGE_TREE | (_REFER if abi >= 2 else 0) | (_TRUNCATE if abi >= 3 else 0)
    scoped = (_SCOPE_SIGNAL | _SCOPE_ABSTRACT_UNIX_SOCKET) if abi >= 6 else 0
    # struct landlock_ruleset_attr {u64 handled_access_fs, handled_access_net, scoped}: older
    # kernels accept the longer struct as long as the fields they do not know are zero.
    attr = struct.pack("<QQQ", handled, 0, scoped)
    ruleset = libc.syscall(_SYS_CREATE_RULESET, attr, len(attr), 0)
    if ruleset < 0:
        return 0
    try:
        rules = [(writable, handled), ("/dev", _WRITE_FILE | (_TRUNCATE if abi >= 3 else 0))]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                beneath = struct.pack("<Qi", access, fd)  # struct landlock_path_beneath_attr (packed)
                if libc.syscall(_SYS_ADD_RULE, ruleset, _RULE_PATH_BENEATH, beneath, 0) != 0:
                    return 0
            finally:
                os.close(fd)
        if libc.syscall(_SYS_RESTRICT_SELF, ruleset, 0) != 0:
            return 0
    finally:
        os.close(ruleset)
    return abi


def confine(writable: str | None) -> dict:
    """Apply every fence this system offers; returns which ones hold (for the report).
    ``writable=None`` keeps file writes open and fences signals only (for a process, such as
    a Jupyter kernel, that must write where it likes)."""
    if not sys.platform.startswith("linux"):
        return {"seccomp": False, "landlock": 0}
    # Required to install either fence without privileges; it also stops set-uid programs
    # from gaining rights, which the worker never needs.
    if _libc().prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        return {"seccomp": False, "landlock": 0}
    return {"landlock": _install_landlock(writable) if writable else 0, "seccomp": _install_seccomp()}
