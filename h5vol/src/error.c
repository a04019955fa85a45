/* Errors: every failure of the connector becomes an entry of HDF5's default error stack (class
 * H5E_ERR_CLS, the major class of the object concerned), with libzarr's message when libzarr failed. */
#include "zvol.h"

#include <stdarg.h>
#include <stdio.h>

void zh5_push(const char *func, unsigned line, hid_t maj, hid_t min, const char *fmt, ...)
{
    char msg[2048];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    H5Epush2(H5E_DEFAULT, "libzarr_h5vol", func, line, H5E_ERR_CLS, maj, min, "zarr VOL: %s", msg);
}

hid_t zh5_minor_of(zarr_status status, hid_t fallback)
{
    switch (status) {
    case ZARR_ERR_NOT_FOUND: return H5E_NOTFOUND;
    case ZARR_ERR_EXISTS: return H5E_EXISTS;
    case ZARR_ERR_READ_ONLY: return H5E_WRITEERROR;
    case ZARR_ERR_OUT_OF_BOUNDS: return H5E_BADRANGE;
    case ZARR_ERR_UNSUPPORTED: return H5E_UNSUPPORTED;
    case ZARR_ERR_METADATA: return H5E_BADVALUE;
    case ZARR_ERR_CODEC:
    case ZARR_ERR_CHECKSUM: return H5E_READERROR;
    default: return fallback;
    }
}

void zh5_push_zarr(const char *func, unsigned line, hid_t maj, hid_t min, zarr_status status, const char *what)
{
    const char *reason = zarr_last_error();
    zh5_push(func, line, maj, zh5_minor_of(status, min), "%s: %s (%s)", what, reason && *reason ? reason : "failed",
             zarr_status_name(status));
}
