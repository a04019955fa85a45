/* Connector settings: the text after the connector's name in HDF5_VOL_CONNECTOR ("zarr zarr_format=2")
 * or given to H5VLconnector_str_to_info, carried by a file access property list (H5Pset_vol):
 *   zarr_format=2|3         the Zarr format of new hierarchies (default 3)
 *   store_options=<JSON>    libzarr store options (zarr_store_options_set_json: endpoint, region,
 *                           credentials, ...); the rest of the text is the JSON object
 * Settings are separated by ';' or spaces. */
#define _POSIX_C_SOURCE 200809L
#include "zvol.h"

#include <stdlib.h>
#include <string.h>

void *zh5_info_copy(const void *info)
{
    const zh5_info *in = info;
    zh5_info *out = calloc(1, sizeof *out);
    if (!out)
        return NULL;
    out->zarr_format = in ? in->zarr_format : 3;
    if (in && in->store_options && !(out->store_options = strdup(in->store_options))) {
        free(out);
        return NULL;
    }
    return out;
}

herr_t zh5_info_free(void *info)
{
    zh5_info *in = info;
    if (in) {
        free(in->store_options);
        free(in);
    }
    return 0;
}

herr_t zh5_info_cmp(int *cmp, const void *a, const void *b)
{
    const zh5_info *x = a, *y = b;
    *cmp = x->zarr_format - y->zarr_format;
    if (*cmp == 0)
        *cmp = strcmp(x->store_options ? x->store_options : "", y->store_options ? y->store_options : "");
    return 0;
}

herr_t zh5_info_to_str(const void *info, char **str)
{
    const zh5_info *in = info;
    const char *opts = in && in->store_options ? in->store_options : NULL;
    size_t n = 32 + (opts ? strlen(opts) + 16 : 0);
    *str = H5allocate_memory(n, 0);
    if (!*str)
        return -1;
    if (opts)
        snprintf(*str, n, "zarr_format=%d;store_options=%s", in ? in->zarr_format : 3, opts);
    else
        snprintf(*str, n, "zarr_format=%d", in ? in->zarr_format : 3);
    return 0;
}

herr_t zh5_info_from_str(const char *str, void **info)
{
    zh5_info *out = zh5_info_copy(NULL);
    const char *p = str ? str : "";
    if (!out)
        return -1;
    while (*p) {
        while (*p == ' ' || *p == ';' || *p == '\t')
            p++;
        if (!*p)
            break;
        if (strncmp(p, "zarr_format=", 12) == 0) {
            char *end;
            long f = strtol(p + 12, &end, 10);
            if ((f != 2 && f != 3) || (*end && *end != ';' && *end != ' ')) {
                zh5_err(H5E_VOL, H5E_BADVALUE, "zarr_format must be 2 or 3 in the connector settings \"%s\"", str);
                zh5_info_free(out);
                return -1;
            }
            out->zarr_format = (int)f;
            p = end;
        } else if (strncmp(p, "store_options=", 14) == 0) {
            zarr_store_options *o = NULL;
            zarr_status st = zarr_store_options_create(&o);
            if (st == ZARR_OK)
                st = zarr_store_options_set_json(o, p + 14);
            zarr_store_options_free(o);
            if (st != ZARR_OK) {
                zh5_zerr(H5E_VOL, H5E_BADVALUE, st, "store_options in the connector settings");
                zh5_info_free(out);
                return -1;
            }
            free(out->store_options);
            if (!(out->store_options = strdup(p + 14))) {
                zh5_info_free(out);
                return -1;
            }
            break;   /* the JSON runs to the end */
        } else {
            zh5_err(H5E_VOL, H5E_BADVALUE,
                    "unknown setting in the connector settings \"%s\" (zarr_format=2|3, store_options=<JSON>)", str);
            zh5_info_free(out);
            return -1;
        }
    }
    *info = out;
    return 0;
}

zh5_info *zh5_info_of(hid_t fapl)
{
    void *info = NULL;
    if (fapl < 0 || fapl == H5P_DEFAULT || H5Pget_vol_info(fapl, &info) < 0)
        info = NULL;
    return info ? info : zh5_info_copy(NULL);
}
