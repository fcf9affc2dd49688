//! The gRPC `helloworld.Greeter`: `SayHello` honours the same delay, cpu,
//! in-flight limit, fail rate and stall as the HTTP answer.

use std::sync::Arc;
use std::time::Instant;

use poolbench_greeter::{Greeter, HelloReply, HelloRequest};
use tonic::{Request, Response, Status};

use crate::shared::{spin_and_toss, Processing, Shared};

/// What a request gets when `fail_rate` strikes: status INTERNAL (13).
const FAIL_MESSAGE: &str = "injected failure (fail_rate)";

/// The Greeter of one server, sharing its knobs and counters.
pub(crate) struct GreeterService {
    pub(crate) shared: Arc<Shared>,
}

#[tonic::async_trait]
impl Greeter for GreeterService {
    async fn say_hello(
        &self,
        request: Request<HelloRequest>,
    ) -> Result<Response<HelloReply>, Status> {
        let shared = &self.shared;
        let received = Instant::now();
        shared.stats.request_received();
        shared.stats.grpc_request();
        let delay = shared.sampler.sample(&mut rand::rng());
        let _permit = match &shared.semaphore {
            Some(sem) => Some(sem.acquire().await.expect("the semaphore is never closed")),
            None => None,
        };
        let _processing = Processing::new(&shared.stats);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let failed = spin_and_toss(shared);
        if let Some(until) = shared.stalled_until(Instant::now()) {
            tokio::time::sleep_until(until.into()).await;
        }
        shared.stats.served(received.elapsed());
        if failed {
            return Err(Status::internal(FAIL_MESSAGE));
        }
        let name = request.into_inner().name;
        Ok(Response::new(HelloReply {
            message: format!("Hello, {name}!"),
        }))
    }
}
