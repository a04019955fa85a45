//! Secrets out of messages: [`redact`] is the one function every text goes through before it becomes
//! part of an error message of a remote store (the location, an `object_store` error text, the C API's
//! `zarr_last_error()`, and what `zarrdump` prints through `zarr_location_redacted()`). It replaces by
//! `***`:
//!
//! - the password of a URL's user information (`http://user:PASSWORD@host` becomes
//!   `http://user:***@host`; user information without a password, which may be a token, becomes `***`);
//! - the value of every query parameter whose name suggests a credential: a presigned URL's
//!   `X-Amz-Signature`, `X-Amz-Credential`, `X-Amz-Security-Token`, `X-Goog-Signature`, `Signature`,
//!   `sig`, `AWSAccessKeyId`, `token`, `access_token`, `password`, `secret`, `key` and the like (see
//!   [`is_secret_name`]);
//! - the credentials of HTTP authorization schemes written out (`Basic ...`, `Bearer ...`, and a
//!   signature's `Signature=...` and `Credential=...`), as an echoed request may show them;
//! - the contents of the XML elements an S3 error body may carry that repeat the request's signature
//!   (`SignatureProvided`, `StringToSign`, `CanonicalRequest`, their `...Bytes` forms, `AWSAccessKeyId`);
//! - every literal occurrence of a known secret: `AWS_SECRET_ACCESS_KEY` and `AWS_SESSION_TOKEN` from the
//!   environment, and the secrets given to any store opened in this process (the `secret_access_key`
//!   and `session_token` options, URL passwords), registered with [`register_secret`]. Values shorter
//!   than [`MIN_SECRET_LEN`] are not searched for (they would mangle ordinary words).

use std::sync::Mutex;

/// What a secret is replaced by.
pub(crate) const MASK: &str = "***";
/// Known secrets shorter than this are not replaced as literal text (URL and parameter forms still are).
pub(crate) const MIN_SECRET_LEN: usize = 4;
/// The most registered secrets kept (the oldest are dropped first; environment secrets are always read).
const MAX_REGISTERED: usize = 256;

static REGISTERED: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Remembers `secret` (a credential given to a store) so that [`redact`] replaces it wherever it
/// appears in a message.
pub fn register_secret(secret: &str) {
    if secret.len() < MIN_SECRET_LEN {
        return;
    }
    let mut r = REGISTERED.lock().unwrap_or_else(|e| e.into_inner());
    if r.iter().any(|s| s == secret) {
        return;
    }
    if r.len() >= MAX_REGISTERED {
        r.remove(0);
    }
    r.push(secret.to_string());
}

/// Whether a query parameter (or header) named `name` carries a credential.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase();
    const PARTS: &[&str] = &["signature", "credential", "token", "secret", "password", "passwd", "pwd", "auth", "apikey", "api_key", "api-key"];
    const WHOLE: &[&str] = &["sig", "key", "awsaccesskeyid", "code"];
    PARTS.iter().any(|p| n.contains(p)) || WHOLE.contains(&n.as_str())
}

/// XML elements of S3 error bodies whose contents repeat (parts of) the signed request.
const SECRET_ELEMENTS: &[&str] =
    &["SignatureProvided", "StringToSign", "StringToSignBytes", "CanonicalRequest", "CanonicalRequestBytes", "AWSAccessKeyId"];

/// `text` with every secret replaced by `***` (see the module documentation).
pub fn redact(text: &str) -> String {
    let mut out = redact_urls(text);
    for scheme in ["Basic ", "Bearer ", "Signature=", "Credential=", "X-Amz-Security-Token: ", "x-amz-security-token:"] {
        out = redact_after(&out, scheme);
    }
    for tag in SECRET_ELEMENTS {
        out = redact_element(&out, tag);
    }
    let mut secrets: Vec<String> = ["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN"]
        .iter()
        .filter_map(|v| std::env::var(v).ok())
        .collect();
    secrets.extend(REGISTERED.lock().unwrap_or_else(|e| e.into_inner()).iter().cloned());
    // Longest first: a secret containing another is replaced whole.
    secrets.sort_by_key(|s| std::cmp::Reverse(s.len()));
    for s in secrets.iter().filter(|s| s.len() >= MIN_SECRET_LEN) {
        if out.contains(s.as_str()) {
            out = out.replace(s.as_str(), MASK);
        }
    }
    out
}

/// Characters that end a URL inside a message.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '"' | '\'' | '<' | '>' | '`' | ')' | ']' | '}' | '\\')
}

/// Masks the password of user information and secret query parameters of every `scheme://...` URL.
fn redact_urls(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let (before, after) = rest.split_at(at + 3);
        out.push_str(before);
        let end = after.find(ends_url).unwrap_or(after.len());
        out.push_str(&redact_url_tail(&after[..end]));
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}

/// `tail` is what follows `scheme://` up to the end of the URL.
fn redact_url_tail(tail: &str) -> String {
    let authority_end = tail.find(['/', '?', '#']).unwrap_or(tail.len());
    let (authority, path) = tail.split_at(authority_end);
    let mut out = String::with_capacity(tail.len());
    match authority.rfind('@').filter(|&at| at > 0) {
        Some(at) => {
            let userinfo = &authority[..at];
            match userinfo.split_once(':') {
                Some((user, _password)) => {
                    out.push_str(user);
                    out.push(':');
                    out.push_str(MASK);
                }
                None => out.push_str(MASK),
            }
            out.push_str(&authority[at..]);
        }
        None => out.push_str(authority),
    }
    match path.split_once('?') {
        Some((p, query)) => {
            out.push_str(p);
            out.push('?');
            let (query, fragment) = match query.split_once('#') {
                Some((q, f)) => (q, Some(f)),
                None => (query, None),
            };
            for (i, pair) in query.split('&').enumerate() {
                if i > 0 {
                    out.push('&');
                }
                match pair.split_once('=') {
                    Some((name, _)) if is_secret_name(name) => {
                        out.push_str(name);
                        out.push('=');
                        out.push_str(MASK);
                    }
                    _ => out.push_str(pair),
                }
            }
            if let Some(f) = fragment {
                out.push('#');
                out.push_str(f);
            }
        }
        None => out.push_str(path),
    }
    out
}

/// Replaces the word after every `marker` (up to white space, `,`, `;`, `<`, `&`, `#` or a quote) by `***`.
fn redact_after(text: &str, marker: &str) -> String {
    if !text.contains(marker) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(marker) {
        out.push_str(&rest[..at + marker.len()]);
        let word = &rest[at + marker.len()..];
        let end = word.find(|c: char| c.is_whitespace() || matches!(c, ',' | ';' | '<' | '"' | '\'' | '&' | '#')).unwrap_or(word.len());
        if end > 0 {
            out.push_str(MASK);
        }
        rest = &word[end..];
    }
    out.push_str(rest);
    out
}

/// Replaces the contents of every `<tag>...</tag>` by `***`.
fn redact_element(text: &str, tag: &str) -> String {
    let (open, close) = (format!("<{tag}>"), format!("</{tag}>"));
    if !text.contains(&open) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(&open) {
        out.push_str(&rest[..at + open.len()]);
        let inner = &rest[at + open.len()..];
        match inner.find(&close) {
            Some(end) => {
                out.push_str(MASK);
                rest = &inner[end..];
            }
            None => {
                // Cut off (a truncated body): mask to the end.
                out.push_str(MASK);
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

/// The same error with its message redacted.
pub fn redact_error(e: crate::Error) -> crate::Error {
    e.map_message(|m| redact(&m))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_passwords_and_signed_query_parameters() {
        assert_eq!(
            redact("GET http://user:s3cr3t@127.0.0.1:9/arr/zarr.json: error sending request for url (http://user:s3cr3t@127.0.0.1:9/arr/zarr.json)"),
            "GET http://user:***@127.0.0.1:9/arr/zarr.json: error sending request for url (http://user:***@127.0.0.1:9/arr/zarr.json)"
        );
        assert_eq!(redact("https://ghp_abcdef@host/x"), "https://***@host/x");
        assert_eq!(redact("https://a:b:c@host"), "https://a:***@host");
        let presigned = "https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA%2F2024&\
                         X-Amz-Date=20240101T000000Z&X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Security-Token=FwoG&X-Amz-Signature=abc123#f";
        let r = redact(&format!("'{presigned}' failed"));
        assert_eq!(
            r,
            "'https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=***&X-Amz-Date=20240101T000000Z&\
             X-Amz-Expires=60&X-Amz-SignedHeaders=host&X-Amz-Security-Token=***&X-Amz-Signature=***#f' failed"
        );
        assert_eq!(redact("http://h/a?sig=x&sv=2020&se=2030&sp=r"), "http://h/a?sig=***&sv=2020&se=2030&sp=r");
        // Ordinary text and URLs stay as they are.
        for s in ["no url here", "s3://bucket/prefix/c/0/1: 503 Service Unavailable", "http://h:80/a/b?x=1", "://", "a://@"] {
            assert_eq!(redact(s), s);
        }
    }

    #[test]
    fn s3_error_bodies_and_known_secrets() {
        let body = "<Error><Code>SignatureDoesNotMatch</Code><AWSAccessKeyId>AKIAX</AWSAccessKeyId>\
                    <StringToSign>AWS4-HMAC-SHA256\n2024</StringToSign><SignatureProvided>deadbeef</SignatureProvided>\
                    <CanonicalRequest>GET /k</CanonicalRequest></Error>";
        let r = redact(body);
        for s in ["AKIAX", "deadbeef", "GET /k", "2024"] {
            assert!(!r.contains(s), "{r}");
        }
        assert!(r.contains("<Code>SignatureDoesNotMatch</Code>"));
        assert_eq!(redact("<StringToSign>cut off"), "<StringToSign>***");
        assert_eq!(
            redact("authorization: Basic dXNlcjpwdw==\r\nAuthorization: AWS4-HMAC-SHA256 Credential=AKIA/x, SignedHeaders=host, Signature=ab12"),
            "authorization: Basic ***\r\nAuthorization: AWS4-HMAC-SHA256 Credential=***, SignedHeaders=host, Signature=***"
        );
        register_secret("zz-registered-secret-zz");
        register_secret("abc"); // too short to search for
        assert_eq!(redact("x zz-registered-secret-zz y abc"), "x *** y abc");
    }
}
