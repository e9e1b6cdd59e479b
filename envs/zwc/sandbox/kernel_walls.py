"""Kernel walls for a sandbox child: a seccomp-bpf filter and a Landlock ruleset.

Why: the sandbox's other walls (restricted builtins, module proxies, the audit hook) are
Python code in the candidate's own process. A hole in them (an interpreter bug, a gadget
we missed) would hand the candidate every system call its user may make. These two walls
are kept by the kernel, so such a hole is not a hole in the machine:

- **seccomp-bpf** (``SECCOMP_RET_KILL_PROCESS``): no process or thread creation, no exec,
  no sockets, nothing that reaches another process (ptrace, process_vm_*, pidfd_*, signals
  to anyone but itself, priorities, rlimits of others, F_SETOWN), no namespaces or mounts,
  no kernel interfaces (bpf, perf, io_uring, userfaultfd, keys, modules, kexec, reboot,
  clocks, ...), no System V or POSIX IPC, no changing file modes, owners, times or xattrs.
  A denied call ends the whole process with SIGSYS: the Python walls already refuse all of
  these, so reaching one means the candidate got around them, and the fork server answers
  ``"killed": "syscall"`` (graded as a bypass attempt, never a pass). Calls newer than the
  table return ENOSYS (libc falls back), the x32 ABI and any other architecture are killed.
- **Landlock** (when the kernel has it): no file opened, created, removed or renamed
  outside the candidate's private working directory; no TCP bind/connect (ABI >= 4); no
  signals or abstract UNIX sockets outside its own domain (ABI >= 6), which keeps a
  candidate away from the other candidates, who all run as the same user.

A deny list, not an allow list: an allow list must name every call NumPy, OpenBLAS, glibc
and CPython make on every path (mremap, madvise, rseq, getrandom, ...), which changes with
their versions; one missing entry would kill honest candidates on one machine and not on
another. The deny list names every family that gives a process power beyond computing on
its own memory and its own directory. Hand-assembled BPF loaded with ``prctl`` through
ctypes, not ``pyseccomp``: no new dependency, no reliance on libseccomp being installed, a
program of a few hundred instructions that is read and tested here (its decision for every
syscall number, on both architectures, by ``tests/envs/zwc/sandbox/test_kernel_walls.py``), laid out
as a binary search so that loading it costs ~0.1 ms, and nothing to call per child but two
``prctl``s (``pyseccomp`` is itself a ctypes binding of libseccomp).

Use: the fork server calls ``probe()`` once before serving (it builds the filter, then
forks a throwaway child that applies both walls and checks that they hold); every child
calls ``apply(workdir)`` last thing in ``child.confine``. A wall the kernel lacks is
reported as missing (``probe()``'s answer, shown as ``SandboxPool.walls``), never skipped
silently; a wall that the probe found working and that fails in a child stops that child
before any candidate code runs (the sample fails; it never runs unwalled). Since no thread
can start under the filter, the server's BLAS must be single-threaded (the fork server sets
``OPENBLAS_NUM_THREADS=1``): a thread pool started after the walls dies at its first clone.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import platform
import signal
from dataclasses import dataclass, field

from envs.zwc.errors import SandboxError

# -- kernel constants (linux/seccomp.h, linux/filter.h, linux/audit.h, linux/landlock.h) ----
PR_SET_NO_NEW_PRIVS, PR_GET_SECCOMP, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 21, 22, 2
RET_KILL_PROCESS, RET_ALLOW, RET_ERRNO = 0x80000000, 0x7FFF0000, 0x00050000
LD_W_ABS, JA, JEQ_K, JGE_K, JGT_K, RET_K = 0x20, 0x05, 0x15, 0x35, 0x25, 0x06
NR_OFFSET, ARCH_OFFSET = 0, 4  # struct seccomp_data: int nr; u32 arch; u64 ip; u64 args[6]


def _arg_low(i: int) -> int:
    """Offset of the low 32 bits of argument ``i`` (little-endian): pids and commands are ints."""
    return 16 + 8 * i


SYS_LANDLOCK_CREATE_RULESET, SYS_LANDLOCK_ADD_RULE, SYS_LANDLOCK_RESTRICT_SELF = 444, 445, 446  # all arches
LANDLOCK_CREATE_RULESET_VERSION, LANDLOCK_RULE_PATH_BENEATH = 1, 1
FS_EXECUTE, FS_WRITE_FILE, FS_READ_FILE, FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
FS_REMOVE_DIR, FS_REMOVE_FILE, FS_MAKE_CHAR, FS_MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
FS_MAKE_REG, FS_MAKE_SOCK, FS_MAKE_FIFO, FS_MAKE_BLOCK, FS_MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
FS_REFER, FS_TRUNCATE, FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15  # ABI 2, 3, 5
NET_BIND_TCP, NET_CONNECT_TCP = 1, 2  # ABI 4
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1, 2  # ABI 6
F_SETOWN, F_SETOWN_EX = 8, 15  # fcntl commands that aim SIGIO at another process

# -- what the filter denies, by family (names as in the kernel's syscall tables) ----------
DENIED: dict[str, tuple[str, ...]] = {
    "process creation": ("clone", "clone3", "fork", "vfork"),
    "exec": ("execve", "execveat"),
    "sockets": ("socket", "socketpair", "connect", "bind", "listen", "accept", "accept4",
                "sendto", "recvfrom", "sendmsg", "recvmsg", "sendmmsg", "recvmmsg", "shutdown",
                "getsockname", "getpeername", "setsockopt", "getsockopt"),
    "other processes": ("ptrace", "process_vm_readv", "process_vm_writev", "kcmp", "pidfd_open",
                        "pidfd_getfd", "pidfd_send_signal", "process_madvise", "process_mrelease",
                        "rt_sigqueueinfo", "rt_tgsigqueueinfo", "setpriority", "sched_setparam",
                        "sched_setscheduler", "sched_setaffinity", "sched_setattr", "ioprio_set",
                        "migrate_pages", "move_pages"),
    "namespaces and mounts": ("mount", "umount2", "pivot_root", "chroot", "unshare", "setns",
                              "open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
                              "mount_setattr", "open_tree_attr"),
    "kernel interfaces": ("bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
                          "io_uring_register", "kexec_load", "kexec_file_load", "reboot", "init_module",
                          "finit_module", "delete_module", "create_module", "get_kernel_syms",
                          "query_module", "add_key", "request_key", "keyctl", "swapon", "swapoff", "acct",
                          "syslog", "quotactl", "quotactl_fd", "nfsservctl", "lookup_dcookie", "iopl",
                          "ioperm", "modify_ldt", "_sysctl", "personality", "settimeofday",
                          "clock_settime", "clock_adjtime", "adjtimex", "sethostname", "setdomainname",
                          "vhangup", "uselib", "name_to_handle_at", "open_by_handle_at", "fanotify_init",
                          "fanotify_mark", "seccomp", "landlock_create_ruleset", "landlock_add_rule",
                          "landlock_restrict_self", "memfd_create", "memfd_secret", "lsm_set_self_attr"),
    "shared IPC": ("shmget", "shmat", "shmctl", "shmdt", "semget", "semop", "semctl", "semtimedop",
                   "msgget", "msgsnd", "msgrcv", "msgctl", "mq_open", "mq_unlink", "mq_timedsend",
                   "mq_timedreceive", "mq_notify", "mq_getsetattr"),
    "file metadata": ("chmod", "fchmod", "fchmodat", "fchmodat2", "chown", "fchown", "lchown",
                      "fchownat", "setxattr", "lsetxattr", "fsetxattr", "removexattr", "lremovexattr",
                      "fremovexattr", "setxattrat", "removexattrat", "utime", "utimes", "utimensat",
                      "futimesat"),
}

# Numbers from 424 on are the same on every architecture.
_COMMON = {"pidfd_send_signal": 424, "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
           "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433,
           "pidfd_open": 434, "clone3": 435, "pidfd_getfd": 438, "process_madvise": 440,
           "mount_setattr": 442, "quotactl_fd": 443, "landlock_create_ruleset": 444,
           "landlock_add_rule": 445, "landlock_restrict_self": 446, "memfd_secret": 447,
           "process_mrelease": 448, "fchmodat2": 452, "lsm_set_self_attr": 460, "setxattrat": 463,
           "removexattrat": 466, "open_tree_attr": 467}
MAX_KNOWN_SYSCALL = 467  # open_tree_attr (Linux 6.15); anything above gets ENOSYS, not a free pass

_X86_64 = {
    "shmget": 29, "shmat": 30, "shmctl": 31, "socket": 41, "connect": 42, "accept": 43, "sendto": 44,
    "recvfrom": 45, "sendmsg": 46, "recvmsg": 47, "shutdown": 48, "bind": 49, "listen": 50,
    "getsockname": 51, "getpeername": 52, "socketpair": 53, "setsockopt": 54, "getsockopt": 55,
    "clone": 56, "fork": 57, "vfork": 58, "execve": 59, "kill": 62, "semget": 64, "semop": 65,
    "semctl": 66, "shmdt": 67, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "fcntl": 72,
    "chmod": 90, "fchmod": 91, "chown": 92, "fchown": 93, "lchown": 94, "ptrace": 101, "syslog": 103,
    "rt_sigqueueinfo": 129, "utime": 132, "uselib": 134, "personality": 135, "setpriority": 141,
    "sched_setparam": 142, "sched_setscheduler": 144, "vhangup": 153, "modify_ldt": 154,
    "pivot_root": 155, "_sysctl": 156, "adjtimex": 159, "chroot": 161, "acct": 163,
    "settimeofday": 164, "mount": 165, "umount2": 166, "swapon": 167, "swapoff": 168, "reboot": 169,
    "sethostname": 170, "setdomainname": 171, "iopl": 172, "ioperm": 173, "create_module": 174,
    "init_module": 175, "delete_module": 176, "get_kernel_syms": 177, "query_module": 178,
    "quotactl": 179, "nfsservctl": 180, "setxattr": 188, "lsetxattr": 189, "fsetxattr": 190,
    "removexattr": 197, "lremovexattr": 198, "fremovexattr": 199, "tkill": 200,
    "sched_setaffinity": 203, "lookup_dcookie": 212, "semtimedop": 220, "clock_settime": 227,
    "tgkill": 234, "utimes": 235, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
    "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "kexec_load": 246, "add_key": 248,
    "request_key": 249, "keyctl": 250, "ioprio_set": 251, "migrate_pages": 256, "fchownat": 260,
    "futimesat": 261, "fchmodat": 268, "unshare": 272, "move_pages": 279, "utimensat": 280,
    "accept4": 288, "rt_tgsigqueueinfo": 297, "perf_event_open": 298, "recvmmsg": 299,
    "fanotify_init": 300, "fanotify_mark": 301, "prlimit64": 302, "name_to_handle_at": 303,
    "open_by_handle_at": 304, "clock_adjtime": 305, "sendmmsg": 307, "setns": 308,
    "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "finit_module": 313,
    "sched_setattr": 314, "seccomp": 317, "memfd_create": 319, "kexec_file_load": 320, "bpf": 321,
    "execveat": 322, "userfaultfd": 323, **_COMMON}
_AARCH64 = {  # asm-generic numbering; no fork, vfork, chmod, chown, utime ... (the *at forms only)
    "lookup_dcookie": 18, "fcntl": 25, "ioprio_set": 30, "umount2": 39, "mount": 40, "pivot_root": 41,
    "nfsservctl": 42, "setxattr": 5, "lsetxattr": 6, "fsetxattr": 7, "removexattr": 14,
    "lremovexattr": 15, "fremovexattr": 16, "fchmod": 52, "fchmodat": 53, "fchownat": 54, "fchown": 55,
    "chroot": 51, "vhangup": 58, "quotactl": 60, "utimensat": 88, "acct": 89, "personality": 92,
    "unshare": 97, "kexec_load": 104, "init_module": 105, "delete_module": 106, "clock_settime": 112,
    "syslog": 116, "ptrace": 117, "sched_setparam": 118, "sched_setscheduler": 119,
    "sched_setaffinity": 122, "kill": 129, "tkill": 130, "tgkill": 131, "rt_sigqueueinfo": 138,
    "setpriority": 140, "reboot": 142, "sethostname": 161, "setdomainname": 162, "prlimit64": 261,
    "settimeofday": 170, "adjtimex": 171, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182,
    "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "msgget": 186, "msgctl": 187,
    "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192, "semop": 193,
    "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "socket": 198, "socketpair": 199,
    "bind": 200, "listen": 201, "accept": 202, "connect": 203, "getsockname": 204, "getpeername": 205,
    "sendto": 206, "recvfrom": 207, "setsockopt": 208, "getsockopt": 209, "shutdown": 210,
    "sendmsg": 211, "recvmsg": 212, "add_key": 217, "request_key": 218, "keyctl": 219, "clone": 220,
    "execve": 221, "swapon": 224, "swapoff": 225, "migrate_pages": 238, "move_pages": 239,
    "rt_tgsigqueueinfo": 240, "perf_event_open": 241, "accept4": 242, "recvmmsg": 243,
    "fanotify_init": 262, "fanotify_mark": 263, "name_to_handle_at": 264, "open_by_handle_at": 265,
    "clock_adjtime": 266, "setns": 268, "sendmmsg": 269, "process_vm_readv": 270,
    "process_vm_writev": 271, "kcmp": 272, "finit_module": 273, "sched_setattr": 274, "seccomp": 277,
    "memfd_create": 279, "bpf": 280, "execveat": 281, "userfaultfd": 282, "kexec_file_load": 294,
    **_COMMON}


@dataclass(frozen=True)
class Arch:
    """One architecture the filter knows: its audit tag and syscall numbers."""

    name: str
    audit: int
    numbers: dict[str, int]
    x32_bit: bool  # x86_64 also accepts x32 calls (nr | 0x40000000) under the same audit tag


ARCHES = {"x86_64": Arch("x86_64", 0xC000003E, _X86_64, True),
          "aarch64": Arch("aarch64", 0xC00000B7, _AARCH64, False)}
ARCHES["amd64"], ARCHES["arm64"] = ARCHES["x86_64"], ARCHES["aarch64"]


class KernelWallError(SandboxError):
    """A kernel wall could not be built or applied; the message names the call and errno."""


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte),
                ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


_SELF = object()  # placeholder for the child's pid, patched in by apply()


def _only(arg: int, allowed: tuple) -> list:
    """Allow the call only if the low word of argument ``arg`` is one of ``allowed``."""
    block = [(LD_W_ABS, 0, 0, _arg_low(arg))]
    for value in allowed:
        block += [(JEQ_K, 0, 1, value), (RET_K, 0, 0, RET_ALLOW)]
    return [*block, (RET_K, 0, 0, RET_KILL_PROCESS)]


def _tree(entries: list[tuple[int, list]]) -> list:
    """Decide on the syscall number in the accumulator: a binary search over ``entries``
    (sorted (nr, block) pairs; a block ends in returns), allowing every other number.

    A search, not a chain: when the filter loads, the kernel runs it once per syscall number
    to fill its allow cache, and a ~300-instruction chain made that the costliest part of
    starting a candidate (~0.2 ms); the search visits ~20 instructions per number.
    """
    if len(entries) <= 4:
        out: list = []
        for nr, block in entries:
            out += [(JEQ_K, 0, len(block), nr), *block]
        return [*out, (RET_K, 0, 0, RET_ALLOW)]
    mid = len(entries) // 2
    left, right = _tree(entries[:mid]), _tree(entries[mid:])
    return [(JGE_K, 0, 1, entries[mid][0]), (JA, 0, 0, len(left)), *left, *right]


def assemble(arch: Arch) -> tuple[list[tuple[int, int, int, int]], list[int]]:
    """The filter as (code, jt, jf, k) instructions, and the indices whose k is the child's pid.

    Layout: wrong architecture -> kill; x32 -> kill; newer than the table -> ENOSYS; then a
    binary search over the denied calls (kill) and the argument-checked ones (signals only
    to itself, rlimits only of itself, no F_SETOWN); everything else is allowed. Only the
    argument-checked calls make the kernel run the filter on each call: for the rest its
    per-syscall cache (Linux >= 5.11) settles allow or kill once, when the filter loads.
    """
    program: list = [(LD_W_ABS, 0, 0, ARCH_OFFSET), (JEQ_K, 1, 0, arch.audit), (RET_K, 0, 0, RET_KILL_PROCESS),
                     (LD_W_ABS, 0, 0, NR_OFFSET)]
    if arch.x32_bit:
        program += [(JGE_K, 0, 1, 0x40000000), (RET_K, 0, 0, RET_KILL_PROCESS)]
    program += [(JGT_K, 0, 1, MAX_KNOWN_SYSCALL), (RET_K, 0, 0, RET_ERRNO | errno.ENOSYS)]
    checked = {
        "kill": _only(0, (_SELF, 0)),       # itself, or its own process group (it leads a new session)
        "tkill": _only(0, (_SELF,)),        # its own (only) thread
        "tgkill": _only(0, (_SELF,)),       # abort() raises SIGABRT this way
        "prlimit64": _only(0, (_SELF, 0)),  # libc reads its own limits; never another process's
        "fcntl": [(LD_W_ABS, 0, 0, _arg_low(1)), (JEQ_K, 0, 1, F_SETOWN), (RET_K, 0, 0, RET_KILL_PROCESS),
                  (JEQ_K, 0, 1, F_SETOWN_EX), (RET_K, 0, 0, RET_KILL_PROCESS), (RET_K, 0, 0, RET_ALLOW)],
    }
    entries = {arch.numbers[name]: block for name, block in checked.items()}
    for name in denied_names(arch):
        entries[arch.numbers[name]] = [(RET_K, 0, 0, RET_KILL_PROCESS)]
    program += _tree(sorted(entries.items()))
    if len(program) > 4096:  # BPF_MAXINSNS
        raise KernelWallError(f"the seccomp filter has {len(program)} instructions; the kernel takes 4096")
    self_slots = [i for i, ins in enumerate(program) if ins[3] is _SELF]
    return [(c, jt, jf, 0 if k is _SELF else k) for c, jt, jf, k in program], self_slots


def denied_names(arch: Arch) -> list[str]:
    """Every call the filter kills unconditionally on ``arch`` (the others do not exist there)."""
    return sorted({n for names in DENIED.values() for n in names if n in arch.numbers})


@dataclass
class _Plan:
    """What the fork server prepared once and every child applies."""

    seccomp: bool = False
    seccomp_detail: str = ""
    landlock: bool = False
    landlock_detail: str = ""
    landlock_abi: int = 0
    program: ctypes.Array | None = None
    fprog: _SockFprog | None = None
    self_slots: list[int] = field(default_factory=list)


_PLAN: _Plan | None = None
_libc = ctypes.CDLL(None, use_errno=True)
# resolved here, in the server: a child only calls them
_syscall, _prctl_fn = getattr(_libc, "syscall", None), getattr(_libc, "prctl", None)


def _errno_text(err: int) -> str:
    return f"{os.strerror(err)} ({errno.errorcode.get(err, err)})"


def _landlock_abi() -> tuple[int, str]:
    """The kernel's Landlock ABI version, or 0 and the kernel's reason."""
    if _syscall is None:
        return 0, "unsupported: no syscall() in this libc"
    version = _call(SYS_LANDLOCK_CREATE_RULESET, None, 0, LANDLOCK_CREATE_RULESET_VERSION)
    if version < 0:
        err = ctypes.get_errno()
        why = {errno.ENOSYS: "unsupported: this kernel has no Landlock",
               errno.EOPNOTSUPP: "unsupported: Landlock is built in but disabled at boot (lsm=)"}
        return 0, f"{why.get(err, 'unavailable')}: landlock_create_ruleset: {_errno_text(err)}"
    return int(version), f"ABI {version}"


def prepare() -> _Plan:
    """Build the filter and find the Landlock ABI; once per process (the fork server)."""
    global _PLAN
    if _PLAN is not None:
        return _PLAN
    plan = _Plan()
    machine = platform.machine().lower()
    arch = ARCHES.get(machine)
    if platform.system() != "Linux":
        plan.seccomp_detail = plan.landlock_detail = f"unsupported: {platform.system()} is not Linux"
    elif _prctl_fn is None or _syscall is None:
        plan.seccomp_detail = plan.landlock_detail = "unsupported: this libc has no prctl() or syscall()"
    elif arch is None:
        plan.seccomp_detail = f"unsupported: no syscall table for machine {machine!r} (x86_64, aarch64 only)"
    else:
        instructions, plan.self_slots = assemble(arch)
        plan.program = (_SockFilter * len(instructions))(*instructions)
        plan.fprog = _SockFprog(len(instructions), plan.program)
        plan.seccomp = True
        plan.seccomp_detail = (f"{arch.name}: {len(denied_names(arch))} calls kill the process, signals "
                               f"and rlimits only to itself, {len(instructions)} BPF instructions")
    if platform.system() == "Linux" and _syscall is not None:
        plan.landlock_abi, plan.landlock_detail = _landlock_abi()
        plan.landlock = plan.landlock_abi > 0
    _PLAN = plan
    return plan


def _check(result: int, what: str) -> int:
    if result < 0:
        raise KernelWallError(f"sandbox kernel wall: {what} failed: {_errno_text(ctypes.get_errno())}")
    return result


def _call(number: int, *args: object) -> int:
    """``syscall(number, args...)``; integers go as longs (variadic: no garbage upper halves)."""
    return _syscall(ctypes.c_long(number), *(ctypes.c_long(a) if isinstance(a, int) else a
                                                   for a in args))


def _prctl(*args: object) -> int:
    return _prctl_fn(*(ctypes.c_ulong(a) if isinstance(a, int) else a for a in args))


def _no_new_privs() -> None:
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def _apply_landlock(workdir: str, abi: int) -> None:
    fs = (FS_EXECUTE | FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE
          | FS_MAKE_CHAR | FS_MAKE_DIR | FS_MAKE_REG | FS_MAKE_SOCK | FS_MAKE_FIFO | FS_MAKE_BLOCK
          | FS_MAKE_SYM)
    inside = (FS_WRITE_FILE | FS_READ_FILE | FS_READ_DIR | FS_REMOVE_DIR | FS_REMOVE_FILE | FS_MAKE_DIR
              | FS_MAKE_REG | FS_MAKE_SYM)
    if abi >= 2:
        fs, inside = fs | FS_REFER, inside | FS_REFER
    if abi >= 3:
        fs, inside = fs | FS_TRUNCATE, inside | FS_TRUNCATE
    if abi >= 5:
        fs |= FS_IOCTL_DEV
    attr = _RulesetAttr(fs, NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0,
                        SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0)
    size = 24 if abi >= 6 else 16 if abi >= 4 else 8  # the struct grew with the ABI
    ruleset = _check(_call(SYS_LANDLOCK_CREATE_RULESET, ctypes.byref(attr), size, 0), "landlock_create_ruleset")
    try:
        directory = os.open(workdir, os.O_PATH | os.O_CLOEXEC)
        try:
            rule = _PathBeneathAttr(inside, directory)
            _check(_call(SYS_LANDLOCK_ADD_RULE, ruleset, LANDLOCK_RULE_PATH_BENEATH, ctypes.byref(rule), 0),
                   f"landlock_add_rule({workdir})")
        finally:
            os.close(directory)
        _check(_call(SYS_LANDLOCK_RESTRICT_SELF, ruleset, 0), "landlock_restrict_self")
    finally:
        os.close(ruleset)


def _apply_seccomp(plan: _Plan) -> None:
    pid = os.getpid()
    for slot in plan.self_slots:
        plan.program[slot].k = pid
    _check(_prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(plan.fprog), 0, 0), "prctl(PR_SET_SECCOMP)")


def apply(workdir: str) -> None:
    """Put up every wall the plan has, in this (forked, single-threaded) process; irreversible.

    Landlock first (its own calls are denied by the filter), then seccomp. Raises
    ``KernelWallError`` if a wall the plan promises cannot be applied.
    """
    plan = prepare()
    if not (plan.seccomp or plan.landlock):
        return
    _no_new_privs()
    if plan.landlock:
        _apply_landlock(workdir, plan.landlock_abi)
    if plan.seccomp:
        _apply_seccomp(plan)


def report() -> dict:
    """Which walls are up: ``{"seccomp": {"active", "detail"}, "landlock": {...}}``."""
    plan = prepare()
    return {"seccomp": {"active": plan.seccomp, "detail": plan.seccomp_detail},
            "landlock": {"active": plan.landlock, "detail": plan.landlock_detail}}


def describe(walls: dict) -> str:
    """One line for people: ``seccomp on (...); landlock OFF (...)``."""
    return "; ".join(f"{name} {'on' if w.get('active') else 'OFF'} ({w.get('detail', '')})"
                     for name, w in walls.items())


def _probe_child(plan: _Plan, workdir: str, write_fd: int) -> None:
    """Apply each wall on its own, check it holds, say what happened, then make a denied call."""
    seen: dict = {}
    try:
        _no_new_privs()
    except KernelWallError as exc:
        seen["seccomp"] = seen["landlock"] = str(exc)
    if plan.landlock and "landlock" not in seen:
        try:
            _apply_landlock(workdir, plan.landlock_abi)
            os.close(os.open("/", os.O_RDONLY))
            seen["landlock"] = "Landlock applied but / could still be opened"
        except KernelWallError as exc:
            seen["landlock"] = str(exc)
        except PermissionError:
            seen["landlock"] = "ok"
    if plan.seccomp and "seccomp" not in seen:
        try:
            _apply_seccomp(plan)
            mode = _prctl(PR_GET_SECCOMP, 0, 0, 0, 0)
            seen["seccomp"] = "ok" if mode == SECCOMP_MODE_FILTER else f"filter loaded but PR_GET_SECCOMP is {mode}"
        except KernelWallError as exc:
            seen["seccomp"] = str(exc)
    os.write(write_fd, json.dumps(seen).encode())
    if seen.get("seccomp") == "ok":
        os.kill(os.getppid(), 0)  # denied: the filter must end this process here (harmless if not)


def probe() -> dict:
    """Prepare, then prove the walls in a throwaway child; drop (and say why) any that fail.

    The child applies each wall to a fresh directory, checks that Landlock refuses ``/``
    and that the kernel reports seccomp filter mode, writes what it saw, then makes a
    denied call (``kill`` of its parent with signal 0); it must die of SIGSYS. Costs one
    fork when the server starts. Returns ``report()``.
    """
    import shutil
    import tempfile

    plan = prepare()
    if not (plan.seccomp or plan.landlock):
        return report()
    workdir = tempfile.mkdtemp(prefix="zwc-walls-probe-")
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # the probe child: never returns
        try:
            os.close(read_fd)
            _probe_child(plan, workdir, write_fd)
        finally:
            os._exit(0)
    os.close(write_fd)
    data = b""
    while chunk := os.read(read_fd, 65536):
        data += chunk
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    shutil.rmtree(workdir, ignore_errors=True)
    try:
        seen = json.loads(data or b"{}")
    except json.JSONDecodeError:
        seen = {}
    if plan.landlock and seen.get("landlock") != "ok":
        plan.landlock = False
        plan.landlock_detail = f"unavailable: {seen.get('landlock', 'the probe child reported nothing')}"
    if plan.seccomp:
        killed = os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS
        if seen.get("seccomp") != "ok" or not killed:
            plan.seccomp = False
            plan.seccomp_detail = (f"unavailable: {seen.get('seccomp', 'the probe child reported nothing')}"
                                   + ("" if killed else f"; a denied call did not end the probe (status {status})"))
    return report()
