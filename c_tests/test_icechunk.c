/* Icechunk repositories through the C API (docs/icechunk.md): create a repository, write through a
 * branch session, commit, read every version back (branch, tag, snapshot id), tags and branches,
 * discard, and the bad input: missing repository / branch / tag / snapshot, a malformed snapshot id,
 * writes and commits on read-only sessions, a commit with nothing to commit, Zarr v2 nodes, an
 * existing tag, a corrupt snapshot file. Built without the `icechunk` feature, every call is
 * ZARR_ERR_UNSUPPORTED (checked instead). */
#include "test_util.h"

#include <fcntl.h>
#include <stdint.h>

#define ARRAY_DOC                                                                                              \
    "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[20,30],\"data_type\":\"int32\","                      \
    "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[5,6]}},"                         \
    "\"chunk_key_encoding\":{\"name\":\"default\",\"configuration\":{\"separator\":\"/\"}},"                   \
    "\"fill_value\":-1,\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}},"          \
    "{\"name\":\"zstd\",\"configuration\":{\"level\":1,\"checksum\":false}}],\"attributes\":{\"units\":\"m\"}}"

static char loc[4096];

/* "icechunk://<repo><suffix>" in a static buffer (rotating). */
static const char *ic(const char *repo, const char *suffix) {
    static char bufs[4][4096];
    static int next;
    char *b = bufs[next++ % 4];
    snprintf(b, sizeof bufs[0], "icechunk://%s%s", repo, suffix);
    return b;
}

static void fill(int32_t *v, size_t n, int32_t base) {
    size_t i;
    for (i = 0; i < n; i++) v[i] = base + (int32_t)i;
}

/* Reads the whole 20x30 array `name` of the location into `out`. */
static zarr_status read_all(const char *location, int32_t *out) {
    zarr_array *a = NULL;
    uint64_t start[2] = {0, 0}, count[2] = {20, 30};
    zarr_status s = zarr_open(location, ZARR_READ, &a);
    if (s != ZARR_OK) return s;
    s = zarr_read_region(a, start, count, out, 20 * 30 * sizeof(int32_t));
    zarr_close(a);
    return s;
}

static void without_feature(const char *repo) {
    zarr_group *g = NULL;
    char *id = NULL;
    CHECK_STATUS(zarr_icechunk_create_repository(ic(repo, ""), &id), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_group_open(ic(repo, ""), ZARR_READ, &g), ZARR_ERR_UNSUPPORTED);
    CHECK_STATUS(zarr_icechunk_create_tag(ic(repo, ""), NULL, "t", NULL, &id), ZARR_ERR_UNSUPPORTED);
}

static void corrupt_snapshot(const char *repo, const char *id) {
    char path[4096];
    int fd;
    zarr_group *g = NULL;
    snprintf(path, sizeof path, "%s/snapshots/%s", repo, id);
    CHECK(t_exists(path));
    fd = open(path, O_WRONLY);
    CHECK(fd >= 0 && ftruncate(fd, 40) == 0);
    if (fd >= 0) close(fd);
    snprintf(loc, sizeof loc, "?snapshot=%s", id);
    CHECK_STATUS(zarr_group_open(ic(repo, loc), ZARR_READ, &g), ZARR_ERR_CODEC);
    CHECK_MSG(id);
}

int main(void) {
    char *dir = t_mkdtemp("icechunk");
    char repo[4096], plain[4096];
    char *id0 = NULL, *id1 = NULL, *id2 = NULL, *tagged = NULL, *other = NULL;
    zarr_group *root = NULL, *g = NULL, *ro = NULL;
    zarr_array *a = NULL, *b = NULL;
    static int32_t v1[600], v2[600], got[600];
    uint64_t start[2] = {0, 0}, count[2] = {20, 30}, rstart[2] = {3, 4}, rcount[2] = {7, 9};
    int changes = -1;
    size_t i;
    zarr_status s;

    snprintf(repo, sizeof repo, "%s/repo", dir);
    s = zarr_icechunk_create_repository(ic(repo, ""), &id0);
    if (s == ZARR_ERR_UNSUPPORTED) {
        printf("libzarr built without the icechunk feature: checking ZARR_ERR_UNSUPPORTED\n");
        without_feature(repo);
        t_rmtree(dir);
        printf("%d checks, %d failures\n", t_checks, t_failures);
        return t_failures ? 1 : 0;
    }
    CHECK_OK(s);
    CHECK(id0 && strlen(id0) == 20);
    CHECK_STATUS(zarr_icechunk_create_repository(ic(repo, ""), NULL), ZARR_ERR_EXISTS);

    /* A branch session: create nodes, write, commit. */
    CHECK_OK(zarr_group_create(ic(repo, ""), "{\"title\":\"from C\"}", &root));
    CHECK_OK(zarr_group_create_group(root, "g", "{\"kind\":\"grid\"}", &g));
    CHECK_OK(zarr_group_create_array(g, "a", ARRAY_DOC, &a));
    fill(v1, 600, 1000);
    CHECK_OK(zarr_write_region(a, start, count, v1, sizeof v1));
    CHECK_OK(zarr_icechunk_has_changes(root, &changes));
    CHECK(changes == 1);
    CHECK_OK(zarr_icechunk_commit(root, "first from C", 0, &id1));
    CHECK(id1 && strlen(id1) == 20 && strcmp(id1, id0) != 0);
    CHECK_OK(zarr_icechunk_has_changes(g, &changes));
    CHECK(changes == 0);
    /* The session continues from the commit: write again (a region), commit through a child group. */
    memcpy(v2, v1, sizeof v1);
    {
        int32_t patch[63];
        size_t r, c;
        for (i = 0; i < 63; i++) patch[i] = -7 - (int32_t)i;
        CHECK_OK(zarr_write_region(a, rstart, rcount, patch, sizeof patch));
        for (r = 0; r < 7; r++)
            for (c = 0; c < 9; c++) v2[(3 + r) * 30 + 4 + c] = patch[r * 9 + c];
    }
    CHECK_OK(zarr_group_set_attributes(root, "{\"title\":\"second\"}"));
    CHECK_OK(zarr_icechunk_commit(g, "second from C", 0, &id2));
    CHECK(id2 && strcmp(id2, id1) != 0);
    {
        char *base = NULL;
        CHECK_OK(zarr_icechunk_snapshot_id(root, &base));
        CHECK(base && id2 && strcmp(base, id2) == 0);
        zarr_string_free(base);
    }

    /* Every version reads back. */
    CHECK_OK(read_all(ic(repo, "!/g/a"), got));
    CHECK(memcmp(got, v2, sizeof v2) == 0);
    snprintf(loc, sizeof loc, "!/g/a?snapshot=%s", id1);
    CHECK_OK(read_all(ic(repo, loc), got));
    CHECK(memcmp(got, v1, sizeof v1) == 0);
    CHECK_OK(zarr_icechunk_create_tag(ic(repo, ""), NULL, "v1", id1, &tagged));
    CHECK(tagged && strcmp(tagged, id1) == 0);
    CHECK_OK(read_all(ic(repo, "!/g/a?tag=v1"), got));
    CHECK(memcmp(got, v1, sizeof v1) == 0);
    CHECK_OK(zarr_icechunk_create_branch(ic(repo, "?branch=main"), NULL, "dev", NULL, &other));
    CHECK(other && strcmp(other, id2) == 0);
    CHECK_OK(read_all(ic(repo, "!/g/a?branch=dev"), got));
    CHECK(memcmp(got, v2, sizeof v2) == 0);
    {
        zarr_group *t = NULL;
        char *attrs = NULL;
        CHECK_OK(zarr_group_open(ic(repo, "?tag=v1"), ZARR_READ, &t));
        CHECK_OK(zarr_group_attributes(t, &attrs));
        CHECK(attrs && strstr(attrs, "from C"));
        zarr_string_free(attrs);
        zarr_group_close(t);
    }

    /* Discard: the changes vanish, the session is at the branch tip again. */
    {
        int32_t zeros[600] = {0};
        CHECK_OK(zarr_write_region(a, start, count, zeros, sizeof zeros));
        CHECK_OK(read_all(ic(repo, "!/g/a"), got)); /* the same process shares the session */
        CHECK(got[0] == 0 && got[599] == 0);
        CHECK_OK(zarr_icechunk_discard(root));
        CHECK_OK(zarr_icechunk_has_changes(root, &changes));
        CHECK(changes == 0);
        CHECK_OK(read_all(ic(repo, "!/g/a"), got));
        CHECK(memcmp(got, v2, sizeof v2) == 0);
    }

    /* Bad input. */
    CHECK_STATUS(zarr_icechunk_commit(root, "nothing", 0, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_icechunk_commit(root, "flags", 8, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_icechunk_commit(root, NULL, 0, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_icechunk_commit(NULL, "x", 0, NULL), ZARR_ERR_INVALID_HANDLE);
    snprintf(loc, sizeof loc, "%s/nothing", dir);
    CHECK_STATUS(zarr_group_open(ic(loc, ""), ZARR_READ, &ro), ZARR_ERR_NOT_FOUND);
    CHECK_MSG("nothing");
    CHECK_STATUS(zarr_group_open(ic(dir, ""), ZARR_READ, &ro), ZARR_ERR_NOT_FOUND); /* a directory, no repo */
    CHECK_STATUS(zarr_group_open(ic(repo, "?branch=nobranch"), ZARR_READ, &ro), ZARR_ERR_NOT_FOUND);
    CHECK_MSG("nobranch");
    CHECK_STATUS(zarr_group_open(ic(repo, "?tag=notag"), ZARR_READ, &ro), ZARR_ERR_NOT_FOUND);
    CHECK_MSG("notag");
    CHECK_STATUS(zarr_group_open(ic(repo, "?snapshot=AAAAAAAAAAAAAAAAAAAA"), ZARR_READ, &ro), ZARR_ERR_NOT_FOUND);
    CHECK_MSG("AAAAAAAAAAAAAAAAAAAA");
    CHECK_STATUS(zarr_group_open(ic(repo, "?snapshot=not-an-id"), ZARR_READ, &ro), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_open(ic(repo, "?tag=v1&branch=main"), ZARR_READ, &ro), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_open(ic(repo, "?color=red"), ZARR_READ, &ro), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_icechunk_create_tag(ic(repo, ""), NULL, "v1", id2, NULL), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_icechunk_create_branch(ic(repo, ""), NULL, "dev", id2, NULL), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_icechunk_create_tag(ic(repo, "?tag=notag"), NULL, "t2", NULL, NULL), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_icechunk_create_tag("/not/icechunk", NULL, "t2", NULL, NULL), ZARR_ERR_INVALID_ARGUMENT);
    /* A tag's session is read-only: writes, new nodes and commits fail, and nothing changes. */
    CHECK_OK(zarr_group_open(ic(repo, "?tag=v1"), ZARR_READ_WRITE, &ro));
    {
        zarr_group *n = NULL;
        CHECK_STATUS(zarr_group_create_group(ro, "new", NULL, &n), ZARR_ERR_READ_ONLY);
    }
    CHECK_STATUS(zarr_group_set_attributes(ro, "{\"x\":1}"), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_group_open_array(ro, "g/a", &b));
    CHECK_STATUS(zarr_write_region(b, start, count, v1, sizeof v1), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_icechunk_commit(ro, "to a tag", 0, NULL), ZARR_ERR_READ_ONLY);
    CHECK_OK(zarr_icechunk_discard(ro));
    zarr_close(b);
    zarr_group_close(ro);
    /* Zarr v2 nodes cannot be stored in Icechunk. */
    {
        zarr_group *v2g = NULL;
        CHECK_STATUS(zarr_group_create_ex(ic(repo, "!/v2group"), NULL, 2, &v2g), ZARR_ERR_UNSUPPORTED);
        CHECK_OK(zarr_icechunk_discard(root));
    }
    /* Not an Icechunk group. */
    snprintf(plain, sizeof plain, "%s/plain", dir);
    CHECK_OK(zarr_group_create(plain, NULL, &ro));
    CHECK_STATUS(zarr_icechunk_commit(ro, "x", 0, NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_icechunk_discard(ro), ZARR_ERR_INVALID_ARGUMENT);
    zarr_group_close(ro);

    zarr_close(a);
    zarr_group_close(g);
    zarr_group_close(root);
    /* The last handle closed: a new open starts a fresh session at the tip. */
    CHECK_OK(zarr_group_open(ic(repo, ""), ZARR_READ_WRITE, &root));
    CHECK_OK(zarr_icechunk_has_changes(root, &changes));
    CHECK(changes == 0);
    zarr_group_close(root);

    corrupt_snapshot(repo, id1);

    zarr_string_free(id0);
    zarr_string_free(id1);
    zarr_string_free(id2);
    zarr_string_free(tagged);
    zarr_string_free(other);
    t_rmtree(dir);
    free(dir);
    printf("%d checks, %d failures\n", t_checks, t_failures);
    return t_failures ? 1 : 0;
}
