/* How far the fcntl locks of libzarr's independent writes reach for an array's location: across the
 * cluster (any local file system, Lustre mounted with `flock`), within a node only (Lustre `localflock`),
 * or nowhere (Lustre `noflock`: fcntl fails with ENOSYS; and Lustre without either option, whose default
 * has been noflock). Found with statfs (Lustre's magic number) and the mount table (/proc/self/mounts:
 * the options of the longest mount point above the array).
 *
 * For the test only (mpi.lockscope_np4): ZARR_MPI_TEST_MOUNTS names a file in the mount table's format
 * read instead of /proc/self/mounts, whose entry's file system type then stands for statfs's answer, so
 * that both answers are testable on a machine without Lustre. */
#define _GNU_SOURCE /* realpath */
#include "zarr_mpi_internal.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>

#define LUSTRE_SUPER_MAGIC 0x0BD00BD0

/* Undoes the mount table's octal escapes (\040 for a space, ...), in place. */
static void unescape(char *s) {
    char *w = s;
    for (char *r = s; *r != '\0'; r++) {
        if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' && r[3] >= '0' && r[3] <= '7') {
            *w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
            r += 3;
        } else {
            *w++ = *r;
        }
    }
    *w = '\0';
}

/* Whether `mnt` is `path` or a directory above it. */
static size_t covers(const char *mnt, const char *path) {
    size_t n = strlen(mnt);
    if (strcmp(mnt, "/") == 0) {
        return 1;
    }
    return strncmp(mnt, path, n) == 0 && (path[n] == '\0' || path[n] == '/') ? n : 0;
}

/* Whether the comma-separated `opts` holds the option `name` exactly. */
static int has_option(const char *opts, const char *name) {
    size_t n = strlen(name);
    for (const char *p = opts; *p != '\0';) {
        const char *e = strchr(p, ',');
        size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, name, n) == 0) {
            return 1;
        }
        p += len + (e != NULL);
    }
    return 0;
}

int zarr_mpi_i_lock_scope(const char *path, char *mount, size_t mount_size) {
    char real[PATH_MAX];
    const char *dir = path;
    mount[0] = '\0';
    if (strncmp(path, "file://", 7) == 0) {
        dir = path + 7;
    } else if (strstr(path, "://") != NULL) {
        return ZARR_MPI_I_LOCKS_CLUSTER; /* another store: no fcntl locks */
    }
    if (realpath(dir, real) == NULL) {
        return ZARR_MPI_I_LOCKS_CLUSTER; /* (the write itself then says what is wrong) */
    }
    const char *table = getenv("ZARR_MPI_TEST_MOUNTS");
    int injected = table != NULL && *table != '\0';
    if (!injected) {
        struct statfs sf;
        if (statfs(real, &sf) != 0 || (unsigned long)sf.f_type != (unsigned long)LUSTRE_SUPER_MAGIC) {
            return ZARR_MPI_I_LOCKS_CLUSTER;
        }
        table = "/proc/self/mounts";
    }
    FILE *f = fopen(table, "r");
    if (f == NULL) {
        /* Lustre, options unknown: not assumed to lock across nodes. */
        snprintf(mount, mount_size, "Lustre (mount options unreadable)");
        return injected ? ZARR_MPI_I_LOCKS_CLUSTER : ZARR_MPI_I_LOCKS_NONE;
    }
    char line[4096], best_type[64] = "", best_opts[1024] = "", best_mnt[PATH_MAX] = "";
    size_t best = 0;
    while (fgets(line, sizeof line, f) != NULL) {
        char dev[1024], mnt[PATH_MAX], type[64], opts[1024];
        if (sscanf(line, "%1023s %4095s %63s %1023s", dev, mnt, type, opts) != 4) {
            continue;
        }
        unescape(mnt);
        size_t n = covers(mnt, real);
        if (n > 0 && n >= best) {
            best = n;
            snprintf(best_type, sizeof best_type, "%s", type);
            snprintf(best_opts, sizeof best_opts, "%s", opts);
            snprintf(best_mnt, sizeof best_mnt, "%s", mnt);
        }
    }
    fclose(f);
    if (best == 0 || strcmp(best_type, "lustre") != 0) {
        if (injected) {
            return ZARR_MPI_I_LOCKS_CLUSTER;
        }
        snprintf(mount, mount_size, "Lustre (no Lustre entry for it in the mount table)");
        return ZARR_MPI_I_LOCKS_NONE;
    }
    int scope = has_option(best_opts, "flock")        ? ZARR_MPI_I_LOCKS_CLUSTER
                : has_option(best_opts, "localflock") ? ZARR_MPI_I_LOCKS_NODE
                                                      : ZARR_MPI_I_LOCKS_NONE;
    snprintf(mount, mount_size, "Lustre at %s mounted %s", best_mnt,
             scope == ZARR_MPI_I_LOCKS_CLUSTER ? "flock"
             : scope == ZARR_MPI_I_LOCKS_NODE  ? "localflock"
             : has_option(best_opts, "noflock") ? "noflock"
                                                : "without flock");
    return scope;
}
