/* zarr_group_move_member: moving arrays and nested groups (v3 and v2, filesystem and memory stores)
 * to new paths, with their chunks and consolidated metadata entries (renamed in the root's, dropped
 * from and added to those of groups above one side only); every refused case (bad names, the group
 * itself, a destination below the source, an existing destination, a missing source or destination
 * parent, read-only handles; S3, zip and HTTP stores and zarr-python's view: tests/interop/test_move.py). */
#include "test_nodes.h"

/* One hierarchy at `root` (zarr_format 2 or 3): a, g/sub/deep/x, g/y, h (consolidated itself), all
 * consolidated at the root; `dir` is its directory on the filesystem (NULL: memory store). */
static void test_hierarchy(const char *root, int zarr_format, const char *dir) {
    zarr_group *g = NULL, *sub = NULL, *ro = NULL;
    const char *meta = zarr_format == 3 ? ARRAY_META : ARRAY_META_V2;
    char path[4096];
    CHECK_OK(zarr_group_create_ex(root, NULL, zarr_format, &g));
    write_values(g, "a", meta, 10);
    CHECK_OK(zarr_group_create_group(g, "g/sub/deep", NULL, &sub));
    CHECK_OK(zarr_group_close(sub));
    write_values(g, "g/sub/deep/x", meta, 20);
    write_values(g, "g/y", meta, 30);
    CHECK_OK(zarr_group_create_group(g, "h", NULL, &sub));
    CHECK_OK(zarr_group_consolidate(sub)); /* h's own consolidated metadata: empty until the move */
    CHECK_OK(zarr_group_close(sub));
    CHECK_OK(zarr_group_consolidate(g));

    /* an array into another group */
    CHECK_OK(zarr_group_move_member(g, "a", "h/b"));
    CHECK(!has_member(g, "a") && values_are(g, "h/b", 10));
    if (dir) {
        snprintf(path, sizeof path, "%s/a", dir);
        CHECK(!t_exists(path));
        snprintf(path, sizeof path, "%s/h/b/c/0", dir); /* the chunk, not a copy: the directory moved */
        if (zarr_format == 2) snprintf(path, sizeof path, "%s/h/b/0", dir);
        CHECK(t_exists(path));
    }
    /* h, above the destination only, lists it from its own consolidated metadata */
    CHECK_OK(zarr_group_open(root, ZARR_READ, &ro));
    CHECK_OK(zarr_group_open_group(ro, "h", &sub));
    CHECK(child_count(sub) == 1 && values_are(sub, "b", 10));
    CHECK_OK(zarr_group_close(sub));
    CHECK_OK(zarr_group_close(ro));

    /* a nested group, through a child group handle, then a whole group to a new top-level name */
    CHECK_OK(zarr_group_open_group(g, "g", &sub));
    CHECK_OK(zarr_group_move_member(sub, "sub/deep", "deeper"));
    CHECK(values_are(sub, "deeper/x", 20) && !has_member(sub, "sub/deep"));
    CHECK_OK(zarr_group_close(sub));
    CHECK_OK(zarr_group_move_member(g, "g", "renamed"));
    CHECK(!has_member(g, "g") && values_are(g, "renamed/y", 30) && values_are(g, "renamed/deeper/x", 20));
    CHECK(child_count(g) == 2);

    /* reopened from the store and its consolidated metadata */
    CHECK_OK(zarr_group_open(root, ZARR_READ, &ro));
    CHECK(child_count(ro) == 2 && values_are(ro, "renamed/y", 30) && values_are(ro, "renamed/deeper/x", 20));
    CHECK(values_are(ro, "h/b", 10) && !has_member(ro, "g") && !has_member(ro, "a"));
    CHECK(has_member(ro, "renamed/sub") && !has_member(ro, "renamed/sub/deep"));

    /* refused, the hierarchy unchanged */
    CHECK_STATUS(zarr_group_move_member(ro, "h", "k"), ZARR_ERR_READ_ONLY);
    CHECK_STATUS(zarr_group_move_member(g, "a", "k"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_move_member(g, "h", "nowhere/k"), ZARR_ERR_NOT_FOUND);
    CHECK_STATUS(zarr_group_move_member(g, "h", "h/b/k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "renamed/y", "h/b/k"), ZARR_ERR_NOT_FOUND); /* h/b is an array */
    CHECK_STATUS(zarr_group_move_member(g, "h", "renamed"), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_group_move_member(g, "renamed/y", "h/b"), ZARR_ERR_EXISTS);
    CHECK_STATUS(zarr_group_move_member(g, "h", "h"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "h", "h/k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "", "k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "h", "."), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "..", "k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "h", "/k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "h", "renamed/../k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "h", "a//b"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, NULL, "k"), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(g, "h", NULL), ZARR_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(zarr_group_move_member(NULL, "h", "k"), ZARR_ERR_INVALID_HANDLE);
    CHECK(values_are(g, "h/b", 10) && values_are(g, "renamed/y", 30) && child_count(g) == 2);
    CHECK_OK(zarr_group_close(ro));
    CHECK_OK(zarr_group_close(g));
}

int main(void) {
    char *dir = t_mkdtemp("move");
    char root[4096];
    snprintf(root, sizeof root, "%s/v3", dir);
    test_hierarchy(root, 3, root);
    snprintf(root, sizeof root, "%s/v2", dir);
    test_hierarchy(root, 2, root);
    test_hierarchy("memory://c-move-v3", 3, NULL);
    test_hierarchy("memory://c-move-v2", 2, NULL);
    CHECK_OK(zarr_memory_store_remove("c-move-v3"));
    CHECK_OK(zarr_memory_store_remove("c-move-v2"));
    return t_finish("test_move", dir);
}
