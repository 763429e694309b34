/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Syscalls the filter must refuse. Each is called with arguments that make the kernel, if
 * the filter lets the call through, either succeed harmlessly or answer something other
 * than EPERM (gate()): so EPERM can only be the filter's, and the negative control, which
 * removes the filter, sees the call reach the kernel. */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/io_uring.h>
#include <linux/kexec.h>
#include <linux/perf_event.h>
#include <linux/userfaultfd.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/timex.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "battery.h"
#include "macro.h"

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif
#define KEY_SPEC_SESSION_KEYRING (-3)
#define KEY_SPEC_PROCESS_KEYRING (-2)
#define KEYCTL_GET_KEYRING_ID 0
#define KCMP_FILE 0

#define GATE(call) do { errno = 0; long _k = (call); gate(r, #call, _k, errno); } while (0)

PROBE(io_uring) {
        struct io_uring_params p = {};
        GATE(syscall(SYS_io_uring_setup, 1, &p));
}

/* UFFD_USER_MODE_ONLY: allowed unprivileged even with vm.unprivileged_userfaultfd=0. */
PROBE(userfaultfd) { GATE(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY)); }
PROBE(keyctl) { GATE(syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID, KEY_SPEC_SESSION_KEYRING, 0)); }
PROBE(add_key) { GATE(syscall(SYS_add_key, "user", "cloister-battery", "x", 1, KEY_SPEC_PROCESS_KEYRING)); }

/* An unknown command: EINVAL from the kernel (only map and program creation need privileges). */
PROBE(bpf) {
        union bpf_attr attr = {};
        GATE(syscall(SYS_bpf, 0x7fff, &attr, sizeof attr));
}

/* Unknown flags: EINVAL before perf_event_paranoid is consulted. */
PROBE(perf_event_open) {
        struct perf_event_attr attr = { .size = sizeof attr, .type = PERF_TYPE_SOFTWARE };
        GATE(syscall(SYS_perf_event_open, &attr, 0, -1, -1, ~0UL));
}

static pid_t sleeping_child(void) {
        pid_t pid = fork();
        if (pid == 0) {
                pause();
                _exit(0);
        }
        return pid;
}

static void reap(pid_t pid) {
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
}

PROBE(ptrace) {
        pid_t child = sleeping_child();
        if (child < 0)
                return failed(r, "fork: %s", strerrorname_np(errno));
        GATE(ptrace(PTRACE_ATTACH, child, 0, 0));
        reap(child);
}

PROBE(process_vm_readv) {
        char from[8] = "battery", to[8];
        struct iovec local = { to, sizeof to }, remote = { from, sizeof from };
        GATE(syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0));
}

PROBE(process_vm_writev) {
        char from[8] = "battery", to[8];
        struct iovec local = { from, sizeof from }, remote = { to, sizeof to };
        GATE(syscall(SYS_process_vm_writev, getpid(), &local, 1, &remote, 1, 0));
}

PROBE(kcmp) { GATE(syscall(SYS_kcmp, getpid(), getpid(), KCMP_FILE, 0, 0)); }

/* setuid(0) fails for lack of privilege with or without the filter; to oneself, which the
 * kernel allows anyone, it shows whether the filter is there. */
PROBE(setuid) {
        if (syscall(SYS_setuid, 0) == 0)
                return opened(r, "setuid(0) succeeded");
        GATE(syscall(SYS_setuid, getuid()));
        if (r->verdict == VERDICT_BLOCKED)
                GATE(syscall(SYS_setgid, getgid()));
}

/* Invalid flags: EINVAL, but only past the CAP_SYS_BOOT check (the control grants it). */
PROBE(kexec_load) { GATE(syscall(SYS_kexec_load, 0, 0, NULL, 0xdead0000UL)); }

/* finit_module(-1): EBADF past the CAP_SYS_MODULE check (the control grants it). */
PROBE(modules) {
        GATE(syscall(SYS_finit_module, -1, "", 0));
        if (r->verdict == VERDICT_BLOCKED)
                GATE(syscall(SYS_init_module, NULL, 0, ""));
}

/* CLOCK_MONOTONIC cannot be set: EINVAL, without any privilege. */
PROBE(clock_settime) {
        struct timespec ts = { .tv_sec = 1 };
        GATE(syscall(SYS_clock_settime, CLOCK_MONOTONIC, &ts));
}

/* modes=0 only reads the clock's state: allowed to anyone. */
PROBE(adjtimex) {
        struct timex tx = {};
        GATE(syscall(SYS_adjtimex, &tx));
}

PROBE(personality) { GATE(syscall(SYS_personality, PER_LINUX | READ_IMPLIES_EXEC)); }

/* MemoryDenyWriteExecute= is a seccomp filter on systemd 252 (EPERM); from 257 on, on a kernel
 * with PR_SET_MDWE (6.3+), systemd sets the prctl instead and the kernel answers EACCES. An
 * EACCES counts as blocked only when the prctl is really in force, so that an EACCES from
 * elsewhere stays open. */
#ifndef PR_GET_MDWE
#define PR_GET_MDWE 66
#endif
#ifndef PR_MDWE_REFUSE_EXEC_GAIN
#define PR_MDWE_REFUSE_EXEC_GAIN 1
#endif
static void mdwe_gate(Result *r, const char *call, long ret, int err) {
        int mdwe;

        if (ret < 0 && err == EACCES) {
                mdwe = prctl(PR_GET_MDWE, 0, 0, 0, 0);
                if (mdwe >= 0 && (mdwe & PR_MDWE_REFUSE_EXEC_GAIN))
                        return blocked(r, "%s: EACCES (prctl PR_SET_MDWE: refuse exec gain)", call);
        }
        gate(r, call, ret, err);
}

PROBE(mmap_wx) {
        void *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        mdwe_gate(r, "mmap(PROT_WRITE|PROT_EXEC)", p == MAP_FAILED ? -1 : 0, errno);
}

PROBE(mprotect_x) {
        char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
                return failed(r, "mmap(PROT_WRITE): %s", strerrorname_np(errno));
        p[0] = (char) 0xc3; /* ret */
        long k = mprotect(p, 4096, PROT_READ | PROT_EXEC);
        mdwe_gate(r, "mprotect(PROT_EXEC)", k, errno);
}

/* An out-of-range priority: EINVAL from the kernel before RLIMIT_RTPRIO is consulted. */
PROBE(realtime) {
        struct sched_param sp = { .sched_priority = 1000 };
        GATE(sched_setscheduler(0, SCHED_FIFO, &sp));
}

/* getpid through the i386 entry point: a non-native architecture. Four outcomes, told apart
 * precisely: our pid back (open); -EPERM or a seccomp kill (blocked, SIGSYS is seen by the
 * parent); a general protection fault on the int $0x80 instruction itself, SIGSEGV with
 * si_code SI_KERNEL, which is what a kernel without the i386 entry (IA32 emulation off)
 * raises even unconfined (not applicable); anything else (error). */
#if defined(__x86_64__)
static sigjmp_buf foreign_arch_jump;
static volatile sig_atomic_t foreign_arch_fault; /* 1: SI_KERNEL at an int $0x80; 2: other */

static void foreign_arch_segv(int sig, siginfo_t *si, void *ucontext) {
        const ucontext_t *uc = ucontext;
        const unsigned char *ip = (const unsigned char *) uc->uc_mcontext.gregs[REG_RIP];

        foreign_arch_fault = si->si_code == SI_KERNEL && ip && ip[0] == 0xcd && ip[1] == 0x80 ? 1 : 2;
        siglongjmp(foreign_arch_jump, 1);
}

PROBE(foreign_arch) {
        struct sigaction sa = { .sa_sigaction = foreign_arch_segv, .sa_flags = SA_SIGINFO };
        long ret = 20; /* __NR_getpid on i386 */

        if (sigaction(SIGSEGV, &sa, NULL) < 0)
                return failed(r, "sigaction(SIGSEGV): %s", strerrorname_np(errno));
        if (sigsetjmp(foreign_arch_jump, 1)) {
                if (foreign_arch_fault == 1)
                        return not_applicable(r, "int $0x80 faults with SIGSEGV/SI_KERNEL: this kernel has no i386 syscall entry");
                return failed(r, "SIGSEGV, but not SI_KERNEL at the int $0x80 instruction");
        }
        __asm__ volatile ("int $0x80" : "+a"(ret) : : "memory");
        if (ret == (long) getpid())
                opened(r, "the i386 getpid answered");
        else if (ret == -EPERM)
                blocked(r, "the i386 getpid: EPERM");
        else
                failed(r, "the i386 getpid returned %ld (neither our pid nor -EPERM)", ret);
}
#else
PROBE(foreign_arch) {
        not_applicable(r, "not x86_64: no foreign architecture to try");
}
#endif
