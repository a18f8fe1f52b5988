//! The router, built from the endpoint declarations: each handler is mounted at its
//! endpoint's method and path, behind the pipeline its access requires.

use axum::Router;
use axum::extract::{FromRequestParts, MatchedPath, Request, State};
use axum::handler::Handler;
use axum::http::request::Parts;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{MethodFilter, on};

use super::Route;
use super::endpoints::{Access, ENDPOINTS, Endpoint, Function};
use super::pipeline::{self, RequestCount};
use hosting_app::app::App;
use hosting_domain::API_PREFIX;
use hosting_domain::domain::{Caller, Scope};
use hosting_domain::error::{ApiError, StoreError};

/// The handlers of one function, each mounted as its declaration says. A function serves
/// exactly the endpoints that name it: serving another's, or leaving one of its own out, stops
/// the router from being built (every test builds every router).
pub struct Routes {
    app: App,
    function: Function,
    served: Vec<&'static Endpoint>,
    router: Router<App>,
}

impl Routes {
    pub fn new(app: App, function: Function) -> Self {
        Self {
            app,
            function,
            served: Vec::new(),
            router: Router::new(),
        }
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
        assert_eq!(
            endpoint.function, self.function,
            "{} {} is declared for another function",
            endpoint.method, endpoint.path
        );
        self.served.push(endpoint);
        let filter = MethodFilter::try_from(endpoint.method.clone())
            .expect("endpoints use standard methods");
        let mut method_router = on(filter, handler);
        // One layer per endpoint (each costs every request a boxed future): the pipeline for
        // a keyed endpoint, and the route for the access log on every endpoint.
        method_router = match endpoint.access {
            Access::Keyed(scope) => {
                let alongside = endpoint.counted_alongside();
                method_router.route_layer(middleware::from_fn_with_state(
                    self.app.clone(),
                    move |state: State<App>, request: Request, next: Next| {
                        authorize(scope, alongside, state, request, next)
                    },
                ))
            }
            Access::Public => method_router.route_layer(middleware::from_fn(remember_route)),
        };
        let path = match endpoint.path {
            "/" => API_PREFIX.to_owned(),
            path => format!("{API_PREFIX}{path}"),
        };
        self.router = self.router.route(&path, method_router);
        self
    }

    pub fn into_router(self) -> Router {
        for endpoint in ENDPOINTS.iter().filter(|e| e.function == self.function) {
            assert!(
                self.served
                    .iter()
                    .any(|served| std::ptr::eq(*served, *endpoint)),
                "{:?} does not serve {} {}, declared for it",
                self.function,
                endpoint.method,
                endpoint.path
            );
        }
        self.router.with_state(self.app)
    }
}

/// The pipeline for `scope` (authentication, rate limit, scope, plan gate), before any
/// extractor of the handler reads the request; the count runs `alongside` the handler when
/// the endpoint says so.
async fn authorize(
    scope: Scope,
    alongside: bool,
    State(app): State<App>,
    mut request: Request,
    next: Next,
) -> Response {
    let count = request
        .extensions()
        .get::<RequestCount>()
        .cloned()
        .unwrap_or_default();
    let matched = request.extensions().get::<MatchedPath>().cloned();
    let mut response =
        match pipeline::admit(&app, request.headers(), scope, alongside, &count).await {
            Ok((caller, deferred)) => {
                let brand = AccessBrand(caller.brand.id.clone());
                request.extensions_mut().insert(caller);
                let mut response = match deferred {
                    Some(count) => count.alongside(next.run(request)).await,
                    None => next.run(request).await,
                };
                response.extensions_mut().insert(brand);
                response
            }
            Err(refusal) => refusal.into_response(),
        };
    Route::record(matched, &mut response);
    response
}

/// A public endpoint's layer: the route for the access log.
async fn remember_route(matched: Option<MatchedPath>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    Route::record(matched, &mut response);
    response
}

/// The brand a request was admitted for, for the access log.
#[derive(Debug, Clone)]
pub struct AccessBrand(pub String);

/// The caller a keyed endpoint's pipeline admitted, as a handler's extractor.
pub struct Admitted(pub Caller);

impl<S: Send + Sync> FromRequestParts<S> for Admitted {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, ApiError> {
        parts
            .extensions
            .remove::<Caller>()
            .map(Admitted)
            .ok_or_else(|| {
                // Only a public endpoint's handler asking for a caller gets here: a wiring bug.
                ApiError::Db(StoreError::Backend(
                    "a public endpoint's handler asked for a caller".into(),
                ))
            })
    }
}
