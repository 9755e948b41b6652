/* A wall clock an hour ahead, for one process started with LD_PRELOAD naming this library
 * built (tests/it/support/clock.rs): CLOCK_REALTIME reads an hour later than the machine's,
 * every other clock is the machine's. Nothing in redlock knows of it. */
#define _GNU_SOURCE
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int clock_gettime(clockid_t id, struct timespec *ts) {
    long failed = syscall(SYS_clock_gettime, id, ts);
    if (!failed && (id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE)) {
        ts->tv_sec += 3600;
    }
    return (int)failed;
}
