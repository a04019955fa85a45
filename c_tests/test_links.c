/* Hostile stores and API misuse through the C API (issue 32; see also tests/hostile_links.rs):
 * - zarr_group_delete_member() and zarr_group_move_member() never follow a symbolic link: a chunk
 *   directory or a member that is a link is removed as a link, a member below a linked directory is
 *   ZARR_ERR_IO; the directory outside keeps every file;
 * - ZARR_CONFINE=1 (and the store option `confine`) refuses reads, writes and listings through a link
 *   out of the store with ZARR_ERR_IO; without it reads follow the link;
 * - zip://FIFO fails at once (alarm() turns a hang into a failure);
 * - handles: closing twice, also after a new handle took the old one's place, is
 *   ZARR_ERR_INVALID_HANDLE and leaves the new handle open, for every handle kind; a pointer that was
 *   never a handle is refused without being read (the valgrind run of this test checks that no freed
 *   or foreign memory is read). */
#include "test_util.h"

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *META = "{\"zarr_format\":3,\"node_type\":\"array\",\"shape\":[8],\"data_type\":\"int32\","
                          "\"chunk_grid\":{\"name\":\"regular\",\"configuration\":{\"chunk_shape\":[4]}},"
                          "\"chunk_key_encoding\":{\"name\":\"default\"},\"fill_value\":-1,"
                          "\"codecs\":[{\"name\":\"bytes\",\"configuration\":{\"endian\":\"little\"}}]}";

static char g_out[4096];

static const char *at(const char *dir, const char *rel) {
    snprintf(g_out, sizeof g_out, "%s/%s", dir, rel);
    return g_out;
}

/* The outside directory: three files that must survive everything. */
static void fill_outside(const char *outside) {
    char p[4200];
    mkdir(outside, 0777);
    snprintf(p, sizeof p, "%s/0", outside);
    t_write_file(p, "AAAAAAAAAAAAAAAA", 16);
    snprintf(p, sizeof p, "%s/notes.txt", outside);
    t_write_file(p, "keep me", 7);
    snprintf(p, sizeof p, "%s/zarr.json", outside);
    t_write_file(p, "SECRET-CONTENT", 14);
}

static int outside_intact(const char *outside) {
    char p[4200];
    size_t n = 0;
    unsigned char *d;
    int ok = 1;
    snprintf(p, sizeof p, "%s/0", outside);
    d = t_read_file(p, &n);
    ok = ok && d && n == 16 && memcmp(d, "AAAAAAAAAAAAAAAA", 16) == 0;
    free(d);
    snprintf(p, sizeof p, "%s/notes.txt", outside);
    d = t_read_file(p, &n);
    ok = ok && d && n == 7 && memcmp(d, "keep me", 7) == 0;
    free(d);
    snprintf(p, sizeof p, "%s/zarr.json", outside);
    d = t_read_file(p, &n);
    ok = ok && d && n == 14;
    free(d);
    return ok;
}

static int is_link(const char *path) {
    struct stat st;
    return lstat(path, &st) == 0 && S_ISLNK(st.st_mode);
}

static void links(const char *tmp) {
    char root[4096], outside[4096], other[4096], p[4200];
    zarr_group *g = NULL;
    zarr_array *a = NULL;
    int32_t vals[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4];
    uint64_t st[1] = {0}, ct[1] = {8}, ct4[1] = {4};

    snprintf(root, sizeof root, "%s/store", tmp);
    snprintf(outside, sizeof outside, "%s/outside", tmp);
    fill_outside(outside);
    CHECK_OK(zarr_group_create(root, NULL, &g));

    /* A chunk directory that links outside: the array goes, the outside stays. */
    CHECK_OK(zarr_create(at(root, "arr"), META, &a));
    CHECK_OK(zarr_close(a));
    CHECK(symlink(outside, at(root, "arr/c")) == 0);
    CHECK_OK(zarr_group_delete_member(g, "arr"));
    CHECK(!t_exists(at(root, "arr")));
    CHECK(outside_intact(outside));

    /* The member itself is a link: removed as a link. */
    CHECK(symlink(outside, at(root, "lnk")) == 0);
    CHECK_OK(zarr_create(at(root, "real"), META, &a));
    CHECK_OK(zarr_close(a));
    snprintf(p, sizeof p, "%s/real/zarr.json", root);
    {
        /* Make the outside directory an array (its zarr.json a real document) for this case only. */
        char doc[4200];
        size_t n = 0;
        unsigned char *d = t_read_file(p, &n);
        snprintf(doc, sizeof doc, "%s/zarr.json", outside);
        CHECK(d && t_write_file(doc, d, n) == 0);
        free(d);
        CHECK_OK(zarr_group_delete_member(g, "lnk"));
        CHECK(!is_link(at(root, "lnk")) && !t_exists(at(root, "lnk")));
        CHECK(t_exists(doc));
        CHECK(t_write_file(doc, "SECRET-CONTENT", 14) == 0);
    }
    CHECK(outside_intact(outside));

    /* A member below a directory that is a link (to a group outside holding an array): refused,
     * nothing deleted or moved. */
    snprintf(other, sizeof other, "%s/other", tmp);
    {
        zarr_group *og = NULL;
        CHECK_OK(zarr_group_create(other, NULL, &og));
        CHECK_OK(zarr_group_close(og));
        CHECK_OK(zarr_create(at(other, "arr"), META, &a));
        CHECK_OK(zarr_write_region(a, st, ct, vals, sizeof vals));
        CHECK_OK(zarr_close(a));
    }
    CHECK(symlink(other, at(root, "par")) == 0);
    CHECK_STATUS(zarr_group_delete_member(g, "par/arr"), ZARR_ERR_IO);
    CHECK_MSG("symbolic link");
    CHECK_STATUS(zarr_group_move_member(g, "real", "par/moved"), ZARR_ERR_IO);
    CHECK(t_exists(at(other, "arr/zarr.json")) && t_exists(at(other, "arr/c/0")) && t_exists(at(other, "arr/c/1")));
    CHECK(!t_exists(at(other, "moved")));
    CHECK(outside_intact(outside));
    CHECK(t_exists(at(root, "real/zarr.json")));
    CHECK(is_link(at(root, "par")));
    CHECK_OK(zarr_group_close(g));

    /* Chunk deletes done by writes never follow a link either: a chunk directory linking outside (whose
     * `0` looks like chunk 0), a write of fill values (which deletes the chunk), zarr_erase_chunk and a
     * resize are refused, nothing outside deleted, the shape unchanged. */
    {
        int32_t fill[4] = {-1, -1, -1, -1};
        uint64_t c0[1] = {0}, four[1] = {4}, shape[1] = {0};
        CHECK_OK(zarr_create(at(root, "fillarr"), META, &a));
        CHECK(symlink(outside, at(root, "fillarr/c")) == 0);
        CHECK_STATUS(zarr_write_region(a, st, ct4, fill, sizeof fill), ZARR_ERR_IO);
        CHECK_MSG("symbolic link");
        CHECK_STATUS(zarr_array_erase_chunk(a, c0), ZARR_ERR_IO);
        CHECK_OK(zarr_close(a));
        snprintf(p, sizeof p, "%s/1", outside);
        CHECK(t_write_file(p, "BBBBBBBBBBBBBBBB", 16) == 0);
        CHECK_OK(zarr_open(at(root, "fillarr"), ZARR_READ_WRITE, &a));
        CHECK_STATUS(zarr_array_resize(a, four, 1), ZARR_ERR_IO);
        CHECK_OK(zarr_close(a));
        CHECK_OK(zarr_open(at(root, "fillarr"), ZARR_READ, &a));
        CHECK_OK(zarr_array_shape(a, shape, 1));
        CHECK(shape[0] == 8);
        CHECK_OK(zarr_close(a));
        CHECK(t_exists(p));
        CHECK(unlink(p) == 0);
        CHECK(outside_intact(outside));
        CHECK(is_link(at(root, "fillarr/c")));
    }

    /* Default mode reads through a linked chunk; ZARR_CONFINE=1 refuses it (and the write). */
    CHECK_OK(zarr_open(at(root, "real"), ZARR_READ_WRITE, &a));
    CHECK_OK(zarr_write_region(a, st, ct, vals, sizeof vals));
    CHECK_OK(zarr_close(a));
    snprintf(p, sizeof p, "%s/real/c/0", root);
    CHECK(unlink(p) == 0 && symlink(at(outside, "0"), p) == 0);
    CHECK_OK(zarr_open(at(root, "real"), ZARR_READ, &a));
    CHECK_OK(zarr_read_region(a, st, ct4, out, sizeof out));
    CHECK(out[0] == 0x41414141);
    CHECK_OK(zarr_close(a));
    CHECK(setenv("ZARR_CONFINE", "1", 1) == 0);
    CHECK_OK(zarr_open(at(root, "real"), ZARR_READ_WRITE, &a));
    CHECK_STATUS(zarr_read_region(a, st, ct4, out, sizeof out), ZARR_ERR_IO);
    CHECK_MSG("refused");
    CHECK_OK(zarr_close(a));
    snprintf(p, sizeof p, "%s/b", root);
    mkdir(p, 0777);
    snprintf(p, sizeof p, "%s/b/zarr.json", root);
    CHECK(symlink(at(outside, "zarr.json"), p) == 0);
    CHECK_STATUS(zarr_open(at(root, "b"), ZARR_READ, &a), ZARR_ERR_IO);
    CHECK(strstr(zarr_last_error(), "SECRET") == NULL);
    /* The store's root is the path opened: a member created below a linked directory is refused. */
    CHECK_OK(zarr_group_open(root, ZARR_READ_WRITE, &g));
    CHECK_STATUS(zarr_group_create_array(g, "par/new", META, &a), ZARR_ERR_IO);
    CHECK(a == NULL);
    CHECK(!t_exists(at(other, "new")));
    CHECK_STATUS(zarr_group_delete_member(g, "par/arr"), ZARR_ERR_IO);
    CHECK_OK(zarr_group_close(g));
    CHECK(unsetenv("ZARR_CONFINE") == 0);
    /* Unconfined, the linked document is read and is no JSON: its content is never quoted. */
    CHECK_STATUS(zarr_open(at(root, "b"), ZARR_READ, &a), ZARR_ERR_METADATA);
    CHECK(strstr(zarr_last_error(), "SECRET") == NULL);
    /* The option says the same as the variable. */
    {
        zarr_store_options *o = NULL;
        CHECK_OK(zarr_store_options_create(&o));
        CHECK_OK(zarr_store_options_set(o, "confine", "true"));
        CHECK_STATUS(zarr_open_with_options(at(root, "b"), o, ZARR_READ, &a), ZARR_ERR_IO);
        CHECK_STATUS(zarr_store_options_set(o, "confine", "maybe"), ZARR_ERR_INVALID_ARGUMENT);
        zarr_store_options_free(o);
    }
    CHECK(outside_intact(outside));
}

static void zip_fifo(const char *tmp) {
    char loc[4200];
    zarr_group *g = NULL;
    CHECK(mkfifo(at(tmp, "fifo.zip"), 0600) == 0);
    snprintf(loc, sizeof loc, "zip://%s/fifo.zip", tmp);
    CHECK_STATUS(zarr_group_open(loc, ZARR_READ, &g), ZARR_ERR_IO);
    CHECK_MSG("FIFO");
    CHECK(g == NULL);
}

static void handles(const char *tmp) {
    zarr_array *a = NULL, *b = NULL;
    zarr_group *g = NULL, *h = NULL;
    zarr_node_list *l = NULL, *m = NULL;
    zarr_array_spec *s = NULL, *t = NULL;
    uint64_t shape[1] = {4};
    size_t rank = 0;
    int32_t local = 0;

    CHECK_OK(zarr_create(at(tmp, "h"), META, &a));
    CHECK_OK(zarr_close(a));
    /* The next handle is likely to take the closed one's place (the old code's address reuse). */
    CHECK_OK(zarr_open(at(tmp, "h"), ZARR_READ, &b));
    CHECK_STATUS(zarr_close(a), ZARR_ERR_INVALID_HANDLE);
    CHECK_STATUS(zarr_array_rank(a, &rank), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_array_rank(b, &rank));
    CHECK(rank == 1);
    CHECK_OK(zarr_close(b));
    CHECK_STATUS(zarr_close(b), ZARR_ERR_INVALID_HANDLE);

    CHECK_OK(zarr_group_create(at(tmp, "hg"), NULL, &g));
    CHECK_OK(zarr_group_close(g));
    CHECK_OK(zarr_group_open(at(tmp, "hg"), ZARR_READ, &h));
    CHECK_STATUS(zarr_group_close(g), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_group_list(h, &l));
    CHECK_OK(zarr_node_list_free(l));
    CHECK_OK(zarr_group_list(h, &m));
    CHECK_STATUS(zarr_node_list_free(l), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_node_list_free(m));
    CHECK_OK(zarr_group_close(h));

    CHECK_OK(zarr_array_spec_new(ZARR_INT32, 1, shape, &s));
    CHECK_OK(zarr_array_spec_free(s));
    CHECK_OK(zarr_array_spec_new(ZARR_INT32, 1, shape, &t));
    CHECK_STATUS(zarr_array_spec_free(s), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_array_spec_free(t));

    /* A handle of one kind passed as another, and pointers libzarr never made. */
    CHECK_OK(zarr_open(at(tmp, "h"), ZARR_READ, &a));
    CHECK_STATUS(zarr_group_close((zarr_group *)a), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_array_rank(a, &rank));
    CHECK_STATUS(zarr_array_rank((zarr_array *)&local, &rank), ZARR_ERR_INVALID_HANDLE);
    CHECK_STATUS(zarr_close((zarr_array *)(uintptr_t)0x1000), ZARR_ERR_INVALID_HANDLE);
    CHECK_OK(zarr_close(a));
}

int main(void) {
    char *tmp = t_mkdtemp("links");
    alarm(120); /* a hang (a blocking FIFO open) fails the test instead of stalling CI */
    links(tmp);
    zip_fifo(tmp);
    handles(tmp);
    return t_finish("test_links", tmp);
}
