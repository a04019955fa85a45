/* An instrumented file system for the MPI tests: the test program defines open, open64, fcntl, rename and
 * linkat, which the libraries it loads (libzarr included) then call instead of the C library's (the
 * program is linked with ENABLE_EXPORTS, so its definitions come first); each counts what touches
 * paths below `io_counter_prefix`, then calls the C library's function. Counted per process:
 *   metadata_reads  zarr.json opened for reading
 *   lock_calls      fcntl byte-range lock requests (F_SETLK(W), F_OFD_SETLK(W)) on files below the prefix
 *   stores          values stored: a temporary file renamed or linked to its key (a chunk or shard file;
 *                   zarr.json not counted)
 * Include it in one file only. */
#ifndef ZARR_MPI_IO_COUNTER_H
#define ZARR_MPI_IO_COUNTER_H

#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char io_counter_prefix[PATH_MAX + 2] = "";
static unsigned long long io_metadata_reads = 0, io_lock_calls = 0, io_stores = 0;

static int io_below(const char *path) {
    size_t n = strlen(io_counter_prefix);
    return n > 0 && path != NULL && strncmp(path, io_counter_prefix, n) == 0;
}

static int io_is_metadata(const char *path) {
    size_t n = strlen(path);
    return n >= 9 && strcmp(path + n - 9, "zarr.json") == 0;
}

static void io_count_open(const char *path, int flags) {
    if (io_below(path) && io_is_metadata(path) && (flags & O_ACCMODE) == O_RDONLY) {
        io_metadata_reads++;
    }
}

static void io_count_store(const char *to) {
    if (io_below(to) && !io_is_metadata(to)) {
        const char *base = strrchr(to, '/');
        base = base != NULL ? base + 1 : to;
        if (base[0] != '.') {
            io_stores++;
        }
    }
}

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...) = NULL;
    mode_t mode = 0;
    if (flags & (O_CREAT | __O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "open");
    }
    io_count_open(path, flags);
    return real(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...) = NULL;
    mode_t mode = 0;
    if (flags & (O_CREAT | __O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "open64");
    }
    io_count_open(path, flags);
    return real(path, flags, mode);
}

int fcntl(int fd, int cmd, ...) {
    static int (*real)(int, int, ...) = NULL;
    va_list ap;
    va_start(ap, cmd);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "fcntl");
    }
    if (cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW) {
        char link[64], target[PATH_MAX];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 0) {
            target[n] = '\0';
            if (io_below(target)) {
                io_lock_calls++;
            }
        }
    }
    return real(fd, cmd, arg);
}

int rename(const char *from, const char *to) {
    static int (*real)(const char *, const char *) = NULL;
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "rename");
    }
    int rc = real(from, to);
    if (rc == 0) {
        io_count_store(to);
    }
    return rc;
}

int linkat(int fromfd, const char *from, int tofd, const char *to, int flags) {
    static int (*real)(int, const char *, int, const char *, int) = NULL;
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "linkat");
    }
    int rc = real(fromfd, from, tofd, to, flags);
    if (rc == 0) {
        io_count_store(to);
    }
    return rc;
}

static void io_counter_reset(void) { io_metadata_reads = io_lock_calls = io_stores = 0; }

#endif
