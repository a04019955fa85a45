/* An instrumented file system for the MPI tests: the test program defines open, open64, openat, openat64,
 * fcntl, rename, renameat and linkat (the directory-relative calls with the directory's path taken from
 * /proc/self/fd, as the filesystem store works relative to directory descriptors), which the libraries it loads (libzarr included) then call instead of the C library's (the
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

/* The path `name` names relative to the directory descriptor `dirfd` (AT_FDCWD or an absolute name: itself). */
static const char *io_at_path(int dirfd, const char *name, char *buf, size_t size) {
    if (name == NULL || name[0] == '/' || dirfd == AT_FDCWD) {
        return name;
    }
    char link[64];
    snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
    ssize_t n = readlink(link, buf, size - 1);
    if (n <= 0) {
        return name;
    }
    buf[n] = '\0';
    if (strcmp(name, ".") != 0) {
        snprintf(buf + n, size - (size_t)n, "/%s", name);
    }
    return buf;
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

static int io_openat(const char *sym, int dirfd, const char *path, int flags, mode_t mode) {
    int (*real)(int, const char *, int, ...) = NULL;
    *(void **)&real = dlsym(RTLD_NEXT, sym);
    char buf[PATH_MAX * 2];
    io_count_open(io_at_path(dirfd, path, buf, sizeof buf), flags);
    return real(dirfd, path, flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | __O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return io_openat("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...) {
    mode_t mode = 0;
    if (flags & (O_CREAT | __O_TMPFILE)) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    return io_openat("openat64", dirfd, path, flags, mode);
}

int renameat(int fromfd, const char *from, int tofd, const char *to) {
    static int (*real)(int, const char *, int, const char *) = NULL;
    if (real == NULL) {
        *(void **)&real = dlsym(RTLD_NEXT, "renameat");
    }
    char buf[PATH_MAX * 2];
    const char *full = io_at_path(tofd, to, buf, sizeof buf); /* before: the name then exists */
    int rc = real(fromfd, from, tofd, to);
    if (rc == 0) {
        io_count_store(full);
    }
    return rc;
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
    char buf[PATH_MAX * 2];
    const char *full = io_at_path(tofd, to, buf, sizeof buf);
    int rc = real(fromfd, from, tofd, to, flags);
    if (rc == 0) {
        io_count_store(full);
    }
    return rc;
}

static void io_counter_reset(void) { io_metadata_reads = io_lock_calls = io_stores = 0; }

#endif
