//! The reference page (`GET /api/v1/docs`; docs/development.md, "The reference page"): HTML rendered from the OpenAPI
//! document itself, so the page and the document cannot disagree. One self-contained page:
//! its style is inline and it loads nothing, from this host or another, and runs no script.
//! A few hundred lines of plain rendering keep the Lambda small where a templating or
//! Markdown crate would add weight for little gain.

use crate::snippets::{VERIFY_NODE, VERIFY_PYTHON};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde_json::{Map, Value};

const STYLE: &str = "
body{font:15px/1.55 system-ui,-apple-system,'Segoe UI',sans-serif;margin:0;color:#1d232b;background:#fff}
header{background:#14213d;color:#fff;padding:28px 40px}header h1{margin:0 0 6px;font-size:26px}
header p{margin:4px 0;max-width:900px;color:#dfe6f3}header a{color:#ffd166}header code{background:#2b3a5c;color:#fff}
nav{position:fixed;top:0;bottom:0;left:0;width:250px;overflow:auto;background:#f4f6fa;border-right:1px solid #dde3ec;padding:16px 14px;box-sizing:border-box;font-size:14px}
nav a{display:block;color:#14213d;text-decoration:none;padding:2px 0}nav a:hover{text-decoration:underline}
nav .group{margin:12px 0 4px;font-weight:600;text-transform:uppercase;font-size:12px;color:#5b6678}
main,header{margin-left:250px}main{padding:8px 40px 60px;max-width:1000px}
h2.tag{text-transform:capitalize}h2{margin-top:42px;border-bottom:2px solid #e6eaf0;padding-bottom:6px}h3{margin-top:30px}
code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:13px}
code{background:#f1f3f7;padding:1px 4px;border-radius:3px}
pre{background:#0f172a;color:#e2e8f0;padding:14px 16px;border-radius:6px;overflow:auto}pre code{background:none;padding:0}
table{border-collapse:collapse;width:100%;margin:10px 0 16px;font-size:14px}
th,td{border:1px solid #dde3ec;padding:6px 8px;text-align:left;vertical-align:top}th{background:#f4f6fa}
.method{display:inline-block;min-width:58px;text-align:center;border-radius:4px;padding:1px 6px;color:#fff;font-weight:600;font-size:13px}
.GET{background:#2a7f62}.POST{background:#1f5fbf}.DELETE{background:#b23a48}.PATCH{background:#a86b00}
.access{color:#5b6678;font-size:14px}.op{border-top:1px solid #e6eaf0;padding-top:6px}
";

fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Escaped text with its `backtick spans` as code.
fn prose(text: &str) -> String {
    escape(text)
        .split('`')
        .enumerate()
        .map(|(i, part)| {
            if i % 2 == 1 {
                format!("<code>{part}</code>")
            } else {
                part.to_owned()
            }
        })
        .collect()
}

fn str_of<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or_default()
}

fn schema_name(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

fn schema_link(name: &str) -> String {
    format!("<a href=\"#schema-{0}\"><code>{0}</code></a>", escape(name))
}

/// A schema in a few words: its type or the schema it names, and its constraints.
fn describe(schema: &Value) -> String {
    if let Some(reference) = schema.get("$ref").and_then(Value::as_str) {
        return schema_link(schema_name(reference));
    }
    let mut words = match schema.get("type") {
        Some(Value::Array(types)) => types
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" or "),
        Some(Value::String(kind)) if kind == "array" => match schema.get("items") {
            Some(items) => format!("array of {}", describe(items)),
            None => "array".into(),
        },
        Some(Value::String(kind)) if kind == "object" => match schema.get("additionalProperties") {
            Some(values @ Value::Object(_)) => format!("map of string to {}", describe(values)),
            _ => "object".into(),
        },
        Some(Value::String(kind)) => kind.clone(),
        _ => "any".into(),
    };
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        let values: Vec<String> = values
            .iter()
            .map(|v| format!("<code>{}</code>", escape(&v.to_string().replace('"', ""))))
            .collect();
        words = format!("{words}, one of {}", values.join(", "));
    }
    for (key, label) in [
        ("format", "format"),
        ("minLength", "min length"),
        ("maxLength", "max length"),
        ("minimum", "min"),
        ("maximum", "max"),
        ("minItems", "min items"),
        ("maxItems", "max items"),
        ("pattern", "pattern"),
        ("default", "default"),
    ] {
        if let Some(value) = schema.get(key) {
            let value = value
                .as_str()
                .map_or_else(|| value.to_string(), str::to_owned);
            let _ = write!(words, ", {label} <code>{}</code>", escape(&value));
        }
    }
    words
}

fn fields_table(schema: &Value) -> String {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return String::new();
    };
    let required: BTreeSet<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut html = String::from(
        "<table><tr><th>Field</th><th>Type</th><th>Required</th><th>Description</th></tr>",
    );
    for (name, property) in properties {
        let _ = write!(
            html,
            "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape(name),
            describe(property),
            if required.contains(name.as_str()) {
                "yes"
            } else {
                "no"
            },
            prose(str_of(property, "description"))
        );
    }
    html.push_str("</table>");
    html
}

/// An operation of the document: method, path and the operation object.
type Operation = (String, String, Value);

/// The operations, grouped by tag in the document's order of tags.
fn operations(document: &Value) -> Vec<(String, Vec<Operation>)> {
    let mut groups: Vec<(String, Vec<Operation>)> = document["tags"]
        .as_array()
        .map(|tags| {
            tags.iter()
                .map(|t| (str_of(t, "name").to_owned(), Vec::new()))
                .collect()
        })
        .unwrap_or_default();
    let empty = Map::new();
    for (path, methods) in document["paths"].as_object().unwrap_or(&empty) {
        for (method, operation) in methods.as_object().unwrap_or(&empty) {
            let tag = operation["tags"][0].as_str().unwrap_or("other");
            let entry = (method.to_uppercase(), path.clone(), operation.clone());
            match groups.iter_mut().find(|(name, _)| name == tag) {
                Some((_, ops)) => ops.push(entry),
                None => groups.push((tag.to_owned(), vec![entry])),
            }
        }
    }
    groups
}

fn render_operation(html: &mut String, method: &str, path: &str, operation: &Value) {
    let id = str_of(operation, "operationId");
    let access = match operation.get("x-required-scope").and_then(Value::as_str) {
        Some(scope) => format!("Bearer key with scope <code>{}</code>", escape(scope)),
        None => "Public: no key needed.".into(),
    };
    let _ = write!(
        html,
        "<section class=\"op\" id=\"{id}\"><h3><span class=\"method {method}\">{method}</span> <code>{}</code></h3>\
         <p><strong>{}</strong> <span class=\"access\">{access}</span></p><p>{}</p>",
        escape(path),
        prose(str_of(operation, "summary")),
        prose(str_of(operation, "description")),
        id = escape(id),
    );
    if let Some(parameters) = operation["parameters"].as_array().filter(|p| !p.is_empty()) {
        html.push_str("<h4>Parameters</h4><table><tr><th>Name</th><th>In</th><th>Required</th><th>Type</th><th>Description</th></tr>");
        for p in parameters {
            let _ = write!(
                html,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                escape(str_of(p, "name")),
                escape(str_of(p, "in")),
                if p["required"] == true { "yes" } else { "no" },
                describe(&p["schema"]),
                prose(str_of(p, "description"))
            );
        }
        html.push_str("</table>");
    }
    if let Some(body) = operation.get("requestBody") {
        let schema = &body["content"]["application/json"]["schema"];
        let _ = write!(
            html,
            "<h4>Request body</h4><p>{}: {}</p>",
            describe(schema),
            prose(str_of(body, "description"))
        );
    }
    html.push_str("<h4>Responses</h4><table><tr><th>Status</th><th>Description</th><th>Body</th><th>Headers</th></tr>");
    let empty = Map::new();
    for (status, response) in response_map(operation).unwrap_or(&empty) {
        let body = match response.get("x-error-codes").and_then(Value::as_array) {
            Some(codes) => {
                let codes: Vec<String> = codes
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|c| format!("<a href=\"#error-{c}\"><code>{c}</code></a>"))
                    .collect();
                format!("{} with code {}", schema_link("Error"), codes.join(", "))
            }
            None => match response["content"]
                .as_object()
                .and_then(|c| c.iter().next())
            {
                Some((media, content)) if media == "application/json" => {
                    describe(&content["schema"])
                }
                Some((media, _)) => format!("<code>{}</code>", escape(media)),
                None => "none".into(),
            },
        };
        let headers: Vec<String> = response["headers"]
            .as_object()
            .map(|h| {
                h.keys()
                    .map(|k| format!("<code>{}</code>", escape(k)))
                    .collect()
            })
            .unwrap_or_default();
        let _ = write!(
            html,
            "<tr><td>{}</td><td>{}</td><td>{body}</td><td>{}</td></tr>",
            escape(status),
            prose(str_of(response, "description")),
            headers.join(" ")
        );
    }
    html.push_str("</table></section>");
}

fn response_map(operation: &Value) -> Option<&Map<String, Value>> {
    operation["responses"].as_object()
}

/// Code -> (statuses, operations) over every documented error answer.
fn error_table(document: &Value) -> BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> {
    let mut table: BTreeMap<String, (BTreeSet<String>, BTreeSet<String>)> = BTreeMap::new();
    for (_, operations) in operations(document) {
        for (method, path, operation) in operations {
            for (status, response) in response_map(&operation).into_iter().flatten() {
                for code in response["x-error-codes"].as_array().into_iter().flatten() {
                    let entry = table
                        .entry(code.as_str().unwrap_or_default().to_owned())
                        .or_default();
                    entry.0.insert(status.clone());
                    entry.1.insert(format!("{method} {path}"));
                }
            }
        }
    }
    table
}

fn render_events(html: &mut String, document: &Value) {
    let hook = &document["webhooks"]["streamEvent"]["post"];
    let content = &hook["requestBody"]["content"]["application/json"];
    let _ = write!(
        html,
        "<h2 id=\"events\">Events</h2><p>{}</p><p>Body: {}. Event types:</p><ul>",
        prose(str_of(hook, "description")),
        describe(&content["schema"])
    );
    let types = document["components"]["schemas"]["EventType"]["enum"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for event_type in types.iter().filter_map(Value::as_str) {
        let _ = write!(
            html,
            "<li><a href=\"#event-{0}\"><code>{0}</code></a></li>",
            escape(event_type)
        );
    }
    html.push_str("</ul>");
    for event_type in types.iter().filter_map(Value::as_str) {
        // A stream event's sample, or the entry of an event about something else
        // (`webhook.disabled`), with that entry's description.
        let (example, described) = match &content["examples"][event_type] {
            Value::Null => other_event(document, event_type),
            example => (example, ""),
        };
        let sample = serde_json::to_string_pretty(&example["value"]).unwrap_or_default();
        let _ = write!(
            html,
            "<h3 id=\"event-{0}\"><code>{0}</code></h3><p>{1}</p><p>{3}</p><pre><code>{2}</code></pre>",
            escape(event_type),
            prose(str_of(example, "summary")),
            escape(&sample),
            prose(described)
        );
    }
    html.push_str(
        "<h3>Headers of every delivery</h3><table><tr><th>Header</th><th>Description</th></tr>",
    );
    for header in hook["parameters"].as_array().into_iter().flatten() {
        let _ = write!(
            html,
            "<tr><td><code>{}</code></td><td>{}</td></tr>",
            escape(str_of(header, "name")),
            prose(str_of(header, "description"))
        );
    }
    html.push_str("</table>");
}

/// The sample of `event_type` from the webhook entry that is not the stream events', and that
/// entry's description.
fn other_event<'a>(document: &'a Value, event_type: &str) -> (&'a Value, &'a str) {
    document["webhooks"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(_, hook)| &hook["post"])
        .find_map(|post| {
            let example =
                &post["requestBody"]["content"]["application/json"]["examples"][event_type];
            (!example.is_null()).then(|| (example, str_of(post, "description")))
        })
        .unwrap_or((&Value::Null, ""))
}

fn render_webhook_guide(html: &mut String) {
    let _ = write!(
        html,
        "<h2 id=\"webhook-guide\">Receiving webhooks</h2>\
<ol><li>Register an HTTPS endpoint with <a href=\"#registerWebhook\"><code>POST /webhooks</code></a> and keep the \
<code>secret</code> of the answer: it is shown only once.</li>\
<li>Verify every delivery <strong>on the raw body</strong>, the exact bytes received, before parsing it. A framework \
that parses JSON and serialises it again changes the bytes (spacing, key order, escapes) and every signature check \
fails. Each delivery carries signatures over the same bytes in two schemes: Standard Webhooks \
(<code>webhook-id</code>, <code>webhook-timestamp</code>, <code>webhook-signature</code>) and Stripe's \
(<code>X-Service-Signature: t=...,v1=...</code>). Check either with its published library. \
<code>webhook-signature</code> also carries <code>v1a,</code>, an Ed25519 signature of \
<code>&lt;id&gt;.&lt;timestamp&gt;.&lt;raw body&gt;</code> that the webhook's <code>public_key</code> \
(<code>whpk_</code> and the base64 of 32 bytes) verifies: a receiver that holds only the public key can check \
deliveries and can never sign one.</li>\
<li>Reject a timestamp more than <strong>5 minutes</strong> from your clock (both libraries do by default): it stops \
replays of a captured delivery.</li>\
<li>Deduplicate on the event <code>id</code> (also <code>X-Service-Event-Id</code> and <code>webhook-id</code>): \
delivery is at least once, and a retry carries the same id and the same body.</li>\
<li>Rotate a secret without downtime with <a href=\"#rotateWebhookSecret\"><code>POST /webhooks/{{id}}/rotate-secret</code></a>: \
until the replaced secret expires every delivery carries a signature with each secret and key pair (two \
<code>v1=</code>, two <code>v1,</code>, two <code>v1a,</code>), so verification with either succeeds while receivers \
switch. <a href=\"#testWebhook\">Send a test \
event</a> to check a receiver, read <a href=\"#listWebhookDeliveries\">its delivery log</a>, and \
<a href=\"#redeliverWebhookEvents\">redeliver</a> what it missed.</li>\
<li>Answer <code>2xx</code> within 10 seconds, then do the work: a slow or failing answer is retried on the schedule \
above, then dead-lettered. Redirects count as failures. Answer <code>410 Gone</code> to stop deliveries to the \
endpoint for good. A webhook whose attempts all fail for 5 days is disabled; <code>failing_since</code> and \
<code>disabled_reason</code> in <a href=\"#getWebhook\">its detail</a> say so, and the brand's other webhooks that \
list <code>webhook.disabled</code> hear of it.</li></ol>\
<h3>Python</h3><pre><code>{}</code></pre><h3>Node.js</h3><pre><code>{}</code></pre>\
<p>Runnable receivers for both are in the repository's <code>examples/receivers/</code>.</p>",
        escape(VERIFY_PYTHON),
        escape(VERIFY_NODE)
    );
}

fn render_lifecycle_guide(html: &mut String) {
    html.push_str(
        "<h2 id=\"lifecycle\">A stream's life</h2>\
<p>A live key's stream starts <code>preparing</code>: its room is created and the AI host dispatched. It is \
<code>live</code> once the host joins the room, and ends <code>ended</code> or <code>error</code>, with \
<code>end_reason</code> saying why (see the <a href=\"#schema-EndReason\"><code>EndReason</code></a> schema). A test \
key's stream is <code>live</code> at once; the <a href=\"#setTestStreamViewers\">test helpers</a> drive it through \
viewers, the host leaving and a provider failure.</p>\
<h3>The show goes on</h3><ul>\
<li><strong>A dispatch that never arrives.</strong> While a stream is <code>preparing</code> and no host has joined \
60 seconds after its last dispatch, the host is dispatched again into the same room, at most 3 dispatches in all \
(failed ones included), until the 5-minute preparing timeout. The stream's status does not change and no event is \
sent.</li>\
<li><strong>A host that drops.</strong> When the live stream's host leaves the room without meaning to (a crash, a \
lost connection, a server restart: any LiveKit <code>disconnect_reason</code> but <code>CLIENT_INITIATED</code>, \
<code>PARTICIPANT_REMOVED</code>, <code>ROOM_DELETED</code>, <code>ROOM_CLOSED</code> and \
<code>DUPLICATE_IDENTITY</code>), the stream stays <code>live</code>, the host is dispatched again at once (and every \
60 seconds while the window lasts), and a <strong>reconnect window</strong> of 60 seconds opens. A host joining \
within it continues the stream: no event, <code>started_at</code> and <code>viewer_count</code> unchanged. When it \
lapses, the stream ends <code>error</code> with <code>end_reason</code> <code>host_lost</code> and \
<code>stream.error</code> is sent.</li>\
<li>Any end during a window (its lapse, <code>DELETE</code>, the room finishing, the duration end) has \
<code>ended_at</code> at the moment the host dropped: nothing aired after it, and no minute of the window counts in \
analytics. During a window the stream holds its concurrency slot and its room.</li>\
<li>A host that leaves on purpose ends the stream <code>ended</code> / <code>host_left</code> at once, as before; a \
host leaving while another host of the stream is in the room changes nothing.</li></ul>\
<p>The retry time and the window are the deployment's <code>DISPATCH_RETRY_SECS</code> and \
<code>RECONNECT_WINDOW_SECS</code> (60 seconds each unless configured otherwise).</p>",
    );
}

/// The page for `document` (the OpenAPI document of this API).
pub fn render(document: &Value) -> String {
    let info = &document["info"];
    let base_url = document["servers"][0]["url"].as_str().unwrap_or_default();
    let groups = operations(document);
    let mut html = String::with_capacity(96 * 1024);
    let _ = write!(
        html,
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} reference</title><style>{STYLE}</style></head><body><nav>\
<div class=\"group\">Guide</div><a href=\"#authentication\">Authentication</a><a href=\"#errors\">Errors</a>\
<a href=\"#lifecycle\">A stream's life</a><a href=\"#events\">Events</a>\
<a href=\"#webhook-guide\">Receiving webhooks</a>",
        title = escape(str_of(info, "title")),
    );
    for (tag, operations) in &groups {
        let _ = write!(
            html,
            "<div class=\"group\">{}</div>",
            escape(&tag.replace('_', " "))
        );
        for (method, path, operation) in operations {
            let _ = write!(
                html,
                "<a href=\"#{}\">{method} {}</a>",
                escape(str_of(operation, "operationId")),
                escape(path)
            );
        }
    }
    html.push_str("<div class=\"group\">Schemas</div>");
    let schemas = document["components"]["schemas"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    for name in schemas.keys() {
        let _ = write!(html, "<a href=\"#schema-{0}\">{0}</a>", escape(name));
    }
    let _ = write!(
        html,
        "</nav><header><h1>{} <small>{}</small></h1><p>{}</p><p>Base URL: <code>{}</code>. \
         Machine-readable: <a href=\"{}/openapi.json\">OpenAPI 3.1 document</a>, from which this page is rendered.</p></header><main>",
        escape(str_of(info, "title")),
        escape(str_of(info, "version")),
        prose(str_of(info, "description")),
        escape(base_url),
        escape(base_url)
    );
    let _ = write!(
        html,
        "<h2 id=\"authentication\">Authentication</h2><p>{}</p>",
        prose(str_of(
            &document["components"]["securitySchemes"]["bearerAuth"],
            "description"
        ))
    );
    html.push_str("<h2 id=\"errors\">Errors</h2><p>Every failure answers <code>{\"error\": {\"code\", \"message\"}}</code>. \
Match on <code>code</code>; the message is for people.</p><table><tr><th>Code</th><th>Status</th><th>Answered by</th></tr>");
    for (code, (statuses, operations)) in error_table(document) {
        let statuses: Vec<&str> = statuses.iter().map(String::as_str).collect();
        let operations: Vec<String> = operations
            .iter()
            .map(|o| format!("<code>{}</code>", escape(o)))
            .collect();
        let _ = write!(
            html,
            "<tr id=\"error-{0}\"><td><code>{0}</code></td><td>{1}</td><td>{2}</td></tr>",
            escape(&code),
            statuses.join(", "),
            operations.join(" ")
        );
    }
    html.push_str("</table>");
    for (tag, operations) in &groups {
        let _ = write!(
            html,
            "<h2 class=\"tag\">{}</h2>",
            escape(&tag.replace('_', " "))
        );
        for (method, path, operation) in operations {
            render_operation(&mut html, method, path, operation);
        }
    }
    render_lifecycle_guide(&mut html);
    render_events(&mut html, document);
    render_webhook_guide(&mut html);
    html.push_str("<h2 id=\"schemas\">Schemas</h2>");
    for (name, schema) in &schemas {
        let _ = write!(
            html,
            "<h3 id=\"schema-{0}\"><code>{0}</code></h3><p>{1}</p>",
            escape(name),
            prose(str_of(schema, "description"))
        );
        if schema.get("enum").is_some() {
            let _ = write!(html, "<p>{}</p>", describe(schema));
        }
        html.push_str(&fields_table(schema));
    }
    html.push_str("</main></body></html>");
    html
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_document_is_escaped_and_backticks_become_code() {
        assert_eq!(
            prose("use `a<b>` & \"c\""),
            "use <code>a&lt;b&gt;</code> &amp; &quot;c&quot;"
        );
        assert_eq!(
            escape("<script>'x'</script>"),
            "&lt;script&gt;&#39;x&#39;&lt;/script&gt;"
        );
    }

    #[test]
    fn schemas_are_described_with_their_constraints() {
        let schema = serde_json::json!({ "type": "string", "maxLength": 200, "enum": ["a", "b"] });
        assert_eq!(
            describe(&schema),
            "string, one of <code>a</code>, <code>b</code>, max length <code>200</code>"
        );
        let reference = serde_json::json!({ "$ref": "#/components/schemas/StreamDetail" });
        assert!(describe(&reference).contains("href=\"#schema-StreamDetail\""));
    }
}
