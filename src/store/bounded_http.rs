//! The HTTP client of the remote stores ([`super::object`]): `object_store`'s reqwest client with every
//! answer's body bounded before `object_store` buffers it.
//!
//! `object_store` collects some bodies whole itself (S3 listings, error pages it quotes, multipart
//! replies), reserving the server's `Content-Length` up front: a server announcing 2^40 bytes made it
//! ask for a terabyte and abort the process, and one streaming an endless error page grew without
//! limit. Here the length a body announces is capped at [`MAX_BUFFERED_BODY`] (so no reservation
//! passes it), and the bodies `object_store` buffers (answers that are not a success, and answers to
//! requests with a query string: listings, multipart) fail once they pass it. Object bodies (a
//! successful GET of a key, no query string) are streamed and bounded by their reader instead
//! (`ReadLimit`, the range asked for).

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use object_store::client::{HttpClient, HttpConnector, HttpError, HttpErrorKind, HttpRequest, HttpResponse, HttpResponseBody, HttpService, ReqwestConnector};
use object_store::ClientOptions;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// The most bytes of a body that `object_store` buffers whole (a listing page of 1000 keys is about
/// 300 KB; error pages are a few hundred bytes), and the most any body may announce as its length
/// for reservation.
const MAX_BUFFERED_BODY: u64 = 16 << 20;

/// Makes the clients of the remote stores: reqwest's, with bounded bodies.
#[derive(Debug, Default)]
pub struct BoundedConnector;

impl HttpConnector for BoundedConnector {
    fn connect(&self, options: &ClientOptions) -> object_store::Result<HttpClient> {
        let inner = ReqwestConnector::default().connect(options)?;
        Ok(HttpClient::new(Bounded { inner }))
    }
}

#[derive(Debug)]
struct Bounded {
    inner: HttpClient,
}

impl HttpService for Bounded {
    fn call<'a, 'b>(&'a self, req: HttpRequest) -> Pin<Box<dyn Future<Output = Result<HttpResponse, HttpError>> + Send + 'b>>
    where
        'a: 'b,
        Self: 'b,
    {
        Box::pin(async move {
            let buffered = req.uri().query().is_some();
            let resp = self.inner.execute(req).await?;
            let limit = if buffered || !resp.status().is_success() { MAX_BUFFERED_BODY } else { u64::MAX };
            let (parts, body) = resp.into_parts();
            Ok(HttpResponse::from_parts(parts, HttpResponseBody::new(BoundedBody { inner: body, left: limit })))
        })
    }
}

/// A response body that fails once more than `left` bytes have come, and whose announced length is
/// capped at [`MAX_BUFFERED_BODY`].
struct BoundedBody {
    inner: HttpResponseBody,
    left: u64,
}

impl Body for BoundedBody {
    type Data = Bytes;
    type Error = HttpError;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, HttpError>>> {
        let frame = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(f))) = &frame {
            let n = f.data_ref().map_or(0, |d| d.len() as u64);
            if n > self.left {
                self.left = 0;
                let e = std::io::Error::other(format!("the server's answer is longer than the {MAX_BUFFERED_BODY} bytes read of it"));
                return Poll::Ready(Some(Err(HttpError::new(HttpErrorKind::Decode, e))));
            }
            self.left -= n;
        }
        frame
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        let h = self.inner.size_hint();
        let mut capped = SizeHint::new();
        capped.set_lower(h.lower().min(MAX_BUFFERED_BODY));
        if let Some(upper) = h.upper() {
            capped.set_upper(upper.max(capped.lower()));
        }
        capped
    }
}
