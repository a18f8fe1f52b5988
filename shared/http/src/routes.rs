//! The router, built from the endpoint declarations: each handler is mounted at its
//! endpoint's method and path, behind the pipeline its access requires.

use std::future::Future;
use std::pin::Pin;

use axum::Router;
use axum::extract::{FromRequestParts, MatchedPath, Request};
use axum::handler::Handler;
use axum::http::request::Parts;
use axum::response::Response;
use axum::routing::{MethodFilter, MethodRouter, on};

use super::endpoints::{Access, ENDPOINTS, Endpoint, Function};
use super::pipeline;
use super::record::RequestRecord;
use hosting_app::app::App;
use hosting_domain::API_PREFIX;
use hosting_domain::error::{ApiError, StoreError};
use hosting_domain::{Caller, Scope};

/// The handlers of one function (or of every function), each mounted as its declaration
/// says. A function serves exactly the endpoints that name it: serving another's, or leaving
/// one of its own out, stops the router from being built (every test builds every router).
pub struct Routes {
    app: App,
    /// The function whose endpoints this router serves; `None`: every function's.
    function: Option<Function>,
    served: Vec<&'static Endpoint>,
    router: Router<App>,
}

impl Routes {
    pub fn new(app: App, function: Function) -> Self {
        Self {
            app,
            function: Some(function),
            served: Vec::new(),
            router: Router::new(),
        }
    }

    /// Every function's endpoints on one router (the gateway's `$default` route and the local
    /// server), each function adding its own. Built as one router rather than merged from one
    /// per function: a merge inserts every route a second time, work each cold start paid.
    pub fn every_function(app: App) -> Self {
        Self {
            app,
            function: None,
            served: Vec::new(),
            router: Router::new(),
        }
    }

    /// Mounts a route that is not an endpoint of the API's own declarations (LiveKit's
    /// webhook receiver): no pipeline, and in neither document.
    pub fn route_outside_the_api(mut self, path: &str, route: MethodRouter<App>) -> Self {
        self.router = self.router.route(path, route);
        self
    }

    /// Mounts `handler` at `endpoint`'s method and path. A keyed endpoint's handler runs only
    /// for a caller that passed the pipeline with its scope, and receives it as [`Admitted`].
    pub fn serve<H, T>(mut self, endpoint: &'static Endpoint, handler: H) -> Self
    where
        H: Handler<T, App>,
        T: 'static,
    {
        // An endpoint declared outside `declare_endpoints!` would be missing from both
        // documents.
        assert!(
            ENDPOINTS
                .iter()
                .any(|listed| std::ptr::eq(*listed, endpoint)),
            "{} {} is not declared with declare_endpoints!",
            endpoint.method,
            endpoint.path
        );
        assert!(
            self.serves(endpoint.function),
            "{} {} is declared for another function",
            endpoint.method,
            endpoint.path
        );
        self.served.push(endpoint);
        let filter = MethodFilter::try_from(endpoint.method.clone())
            .expect("endpoints use standard methods");
        let method_router = on(
            filter,
            Mounted {
                handler,
                access: endpoint.access,
                alongside: endpoint.counted_alongside(),
            },
        );
        let path = match endpoint.path {
            "/" => API_PREFIX.to_owned(),
            path => format!("{API_PREFIX}{path}"),
        };
        self.router = self.router.route(&path, method_router);
        self
    }

    fn serves(&self, function: Function) -> bool {
        self.function.is_none_or(|own| own == function)
    }

    pub fn into_router(self) -> Router {
        for endpoint in ENDPOINTS.iter().filter(|e| self.serves(e.function)) {
            assert!(
                self.served
                    .iter()
                    .any(|served| std::ptr::eq(*served, *endpoint)),
                "{:?} does not serve {} {}, declared for it",
                endpoint.function,
                endpoint.method,
                endpoint.path
            );
        }
        self.router.with_state(self.app)
    }
}

/// An endpoint's handler with what its access requires around it: the pipeline for a keyed
/// endpoint, and the route for the access log on every endpoint. Wrapping the handler itself,
/// rather than adding a layer to its route, spares every request a cloned service and two
/// boxed futures.
#[derive(Clone)]
struct Mounted<H> {
    handler: H,
    access: Access,
    /// The count runs alongside the handler ([`Endpoint::counted_alongside`]).
    alongside: bool,
}

impl<H, T> Handler<T, App> for Mounted<H>
where
    H: Handler<T, App>,
    T: 'static,
{
    type Future = Pin<Box<dyn Future<Output = Response> + Send>>;

    fn call(self, request: Request, app: App) -> Self::Future {
        Box::pin(async move {
            let record = request
                .extensions()
                .get::<RequestRecord>()
                .cloned()
                .unwrap_or_default();
            record.note_route(request.extensions().get::<MatchedPath>().cloned());
            match self.access {
                Access::Public => self.handler.call(request, app).await,
                Access::Keyed(scope) => {
                    authorize(scope, self.alongside, app, request, self.handler, &record).await
                }
            }
        })
    }
}

/// The pipeline for `scope` (authentication, rate limit, scope, plan gate), before any
/// extractor of the handler reads the request; the count runs `alongside` the handler when
/// the endpoint says so. The standing and the brand are noted in `record`.
async fn authorize<H, T>(
    scope: Scope,
    alongside: bool,
    app: App,
    request: Request,
    handler: H,
    record: &RequestRecord,
) -> Response
where
    H: Handler<T, App>,
{
    match pipeline::admit(&app, request.headers(), scope, alongside, record).await {
        Ok((caller, deferred)) => {
            record.note_admitted(caller);
            let answer = handler.call(request, app);
            match deferred {
                Some(count) => count.alongside(answer).await,
                None => answer.await,
            }
        }
        Err(refusal) => crate::error_response(&refusal),
    }
}

/// The caller a keyed endpoint's pipeline admitted, as a handler's extractor.
pub struct Admitted(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Admitted {
    type Rejection = crate::ErrorResponse;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, crate::ErrorResponse> {
        parts
            .extensions
            .get::<RequestRecord>()
            .and_then(RequestRecord::take_caller)
            .map(Admitted)
            .ok_or_else(|| {
                // Only a public endpoint's handler asking for a caller gets here: a wiring bug.
                ApiError::Db(StoreError::Backend(
                    "a public endpoint's handler asked for a caller".into(),
                ))
                .into()
            })
    }
}
