/* The output rules of h5tozarr and zarrtoh5 (docs/hdf5-netcdf.md, "What the tools never replace"):
 *  - the output's parent directory must exist (as cp, the tools create no directories);
 *  - the input is never replaced or written into: the output may not be the input (same device and
 *    inode, through any link), lie inside the input, or hold the input;
 *  - --overwrite replaces only what the tool itself writes: a Zarr hierarchy (a directory with zarr.json,
 *    .zgroup or .zarray at its root) for h5tozarr, an HDF5 file (its signature) for zarrtoh5; never a
 *    symbolic link, another directory or another file;
 *  - the output is written under a temporary name beside it, `.<tool>-tmp-<host>-<pid>-<name>`; a run
 *    killed by SIGKILL (which no program can catch) leaves that name behind, and the next run for the
 *    same output on the same host removes it once process <pid> no longer exists (remove_stale()).
 * Every refusal is a message naming the path and the reason and exit status 1, before anything is
 * written. Every function is static: a tool includes this header once, after h5zcommon.h. */
#ifndef ZARR_H5Z_OUTPUT_H
#define ZARR_H5Z_OUTPUT_H

#include <dirent.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/types.h>

static int rm_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
    (void)st; (void)flag; (void)ftw;
    remove(p);
    return 0;
}

/* Removes a file or a directory tree (does not follow links). */
static void rm_tree(const char *path) { nftw(path, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* The output path split at its last '/': `dir` ("." when there is none; "/" for the root) and `base`.
 * Trailing slashes are dropped first. */
typedef struct {
    char *path, *dir, *base;
} out_path;

static void out_path_init(out_path *o, const char *arg) {
    o->path = xstrdup(arg);
    for (size_t n = strlen(o->path); n > 1 && o->path[n - 1] == '/'; n--) o->path[n - 1] = 0;
    const char *slash = strrchr(o->path, '/');
    if (!slash) {
        o->dir = xstrdup(".");
        o->base = xstrdup(o->path);
    } else {
        size_t n = (size_t)(slash - o->path);
        o->dir = xmalloc(n + 2);
        memcpy(o->dir, o->path, n ? n : 1);
        o->dir[n ? n : 1] = 0;
        o->base = xstrdup(slash + 1);
    }
}

static void out_path_free(out_path *o) {
    free(o->path);
    free(o->dir);
    free(o->base);
}

/* "<dir>/<prefix><name>" (caller frees). */
static char *beside(const out_path *o, const char *name) {
    char *p = xmalloc(strlen(o->dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", o->dir, name);
    return p;
}

static int same_inode(const struct stat *a, const struct stat *b) {
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Whether the existing path `p` is `dir` or lies below it: each directory from p's real path up to the
 * root is compared with `dir` by device and inode (so links and bind mounts do not hide it). */
static int lies_within(const char *p, const struct stat *dir) {
    char *real = realpath(p, NULL);
    if (!real) return 0;
    int found = 0;
    for (;;) {
        struct stat st;
        if (stat(real, &st) == 0 && same_inode(&st, dir)) { found = 1; break; }
        char *slash = strrchr(real, '/');
        if (!slash || slash == real) {
            if (slash && real[1]) { real[1] = 0; continue; } /* "/x" -> "/" */
            break;
        }
        *slash = 0;
    }
    free(real);
    return found;
}

/* Whether `path` is a Zarr hierarchy: a directory with zarr.json, .zgroup or .zarray at its root. */
static inline int is_zarr_hierarchy(const char *path) {
    static const char *const docs[] = {"zarr.json", ".zgroup", ".zarray"};
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
    for (size_t k = 0; k < sizeof docs / sizeof *docs; k++) {
        char *p = xmalloc(strlen(path) + 16);
        sprintf(p, "%s/%s", path, docs[k]);
        int ok = stat(p, &st) == 0 && S_ISREG(st.st_mode);
        free(p);
        if (ok) return 1;
    }
    return 0;
}

/* Whether the file at `path` starts with HDF5's signature, at offset 0, 512, 1024, 2048, ... (where
 * HDF5 looks for it: a user block may come first). */
static inline int has_hdf5_signature(const char *path) {
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    int fd = open(path, O_RDONLY);
    if (fd < 0) return 0;
    struct stat st;
    int found = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
        for (off_t at = 0; !found && at + 8 <= st.st_size; at = at ? at * 2 : 512) {
            unsigned char b[8];
            found = pread(fd, b, 8, at) == 8 && !memcmp(b, sig, 8);
        }
    close(fd);
    return found;
}

/* The refusals every run makes before it writes (see the top of this file). `in`: the input path,
 * which exists; `o`: the output; `overwrite`: --overwrite given; `replaceable(path)`: whether an
 * existing output is what --overwrite may replace; `what` names that ("a Zarr hierarchy") and `detail`
 * says why an output is not that ("not a Zarr hierarchy (no zarr.json, .zgroup or .zarray at its
 * root)"). Returns whether the output exists. */
static int check_output(const char *in, const out_path *o, int overwrite, int (*replaceable)(const char *),
                        const char *what, const char *detail) {
    struct stat in_st, dir_st, st;
    if (stat(in, &in_st) != 0) die("%s: %s", in, strerror(errno));
    if (stat(o->dir, &dir_st) != 0)
        die("%s: the directory %s does not exist (%s creates no directories)", o->path, o->dir, g_prog);
    if (!S_ISDIR(dir_st.st_mode)) die("%s: %s is not a directory", o->path, o->dir);
    if (S_ISDIR(in_st.st_mode) && lies_within(o->dir, &in_st))
        die("%s: lies inside the input %s; %s never writes into its input", o->path, in, g_prog);
    if (lstat(o->path, &st) != 0) return 0;
    struct stat target;
    if (stat(o->path, &target) == 0 && same_inode(&target, &in_st))
        die("%s: is the input itself; %s never replaces its input", o->path, g_prog);
    if (!overwrite) die("%s: the output exists (--overwrite replaces it)", o->path);
    if (S_ISLNK(st.st_mode))
        die("%s: is a symbolic link; --overwrite replaces only %s, not a link", o->path, what);
    if (S_ISDIR(st.st_mode) && lies_within(in, &st))
        die("%s: holds the input %s; %s never replaces its input", o->path, in, g_prog);
    if (!replaceable(o->path))
        die("%s: is %s, %s; --overwrite replaces only %s, so it is left as it is", o->path,
            S_ISDIR(st.st_mode) ? "a directory" : S_ISREG(st.st_mode) ? "a file" : "neither a file nor a directory",
            detail, what);
    return 1;
}

/* This host's name for temporary names: letters, digits, '.' and '_' kept, anything else '_'. */
static void host_name(char *buf, size_t n) {
    if (gethostname(buf, n) != 0 || !buf[0]) snprintf(buf, n, "localhost");
    buf[n - 1] = 0;
    for (char *p = buf; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.') *p = '_';
}

/* The temporary name `.<tool>-<kind>-<host>-<pid>-<base>` of this run beside the output (caller frees). */
static char *temp_name(const out_path *o, const char *tool, const char *kind) {
    char host[72];
    host_name(host, sizeof host);
    char *name = xmalloc(strlen(tool) + strlen(kind) + strlen(host) + strlen(o->base) + 40);
    sprintf(name, ".%s-%s-%s-%ld-%s", tool, kind, host, (long)getpid(), o->base);
    char *p = beside(o, name);
    free(name);
    return p;
}

/* The process id in `entry` when it is `.<tool>-<kind>-<host>-<pid>-<base>` of this host and output;
 * 0 otherwise. */
static long temp_pid(const char *entry, const out_path *o, const char *tool, const char *kind) {
    char host[72], head[200];
    host_name(host, sizeof host);
    snprintf(head, sizeof head, ".%s-%s-%s-", tool, kind, host);
    size_t hn = strlen(head), en = strlen(entry), bn = strlen(o->base);
    if (en <= hn + bn + 1 || strncmp(entry, head, hn) || strcmp(entry + en - bn, o->base) || entry[en - bn - 1] != '-')
        return 0;
    long pid = 0;
    for (const char *p = entry + hn; p < entry + en - bn - 1; p++) {
        if (!isdigit((unsigned char)*p) || pid > (long)INT_MAX / 10) return 0;
        pid = pid * 10 + (*p - '0');
    }
    return pid;
}

/* Removes what a killed run (SIGKILL) of `tool` for this output on this host left beside it, once its
 * process is gone: a temporary output `-tmp-` (removed), and for h5tozarr an old output it had moved
 * aside `-old-` (removed when the new output is in place; put back when the output is missing). Each is
 * named on stderr. */
static void remove_stale(const out_path *o, const char *tool) {
    DIR *d = opendir(o->dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        long pid = temp_pid(e->d_name, o, tool, "tmp");
        int old = 0;
        if (!pid) {
            pid = temp_pid(e->d_name, o, tool, "old");
            old = pid != 0;
        }
        if (!pid || pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
        char *p = beside(o, e->d_name);
        struct stat st;
        if (old && lstat(o->path, &st) != 0) {
            if (rename(p, o->path) == 0)
                fprintf(stderr, "%s: %s: put back from %s, where a killed run (process %ld) had moved it\n", tool,
                        o->path, p, pid);
        } else {
            rm_tree(p);
            fprintf(stderr, "%s: removed %s, left by a killed run (process %ld)\n", tool, p, pid);
        }
        free(p);
    }
    closedir(d);
}

#endif
