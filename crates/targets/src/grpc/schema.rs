//! Which unary method a gRPC target calls, and its request message: from
//! `--proto` files compiled at run time (protox), from the server's
//! reflection, or the built-in `helloworld.Greeter`.
use prost_reflect::{DescriptorPool, MessageDescriptor, MethodDescriptor};
use std::path::{Path, PathBuf};

/// The call of the Greeter, the default.
pub(crate) const GREETER_CALL: &str = "helloworld.Greeter/SayHello";

/// One unary method.
#[derive(Clone, Debug)]
pub(crate) struct Method {
    /// `package.Service/Method`.
    pub(crate) name: String,
    /// The request path, `/package.Service/Method`.
    pub(crate) path: String,
    pub(crate) input: MessageDescriptor,
}

/// `package.Service/Method` or `package.Service.Method`, as ghz and
/// grpcurl accept it: the service and the method.
pub(crate) fn split_call(call: &str) -> Result<(&str, &str), String> {
    let call = call.trim_start_matches('/');
    let split = call.rfind('/').or_else(|| call.rfind('.'));
    match split {
        Some(i) if i > 0 && i + 1 < call.len() => Ok((&call[..i], &call[i + 1..])),
        _ => Err(format!(
            "invalid --call \"{call}\": expected package.Service/Method"
        )),
    }
}

/// The Greeter's descriptors, compiled into the binary.
pub(crate) fn greeter_pool() -> DescriptorPool {
    DescriptorPool::decode(poolbench_greeter::FILE_DESCRIPTOR_SET)
        .expect("the built-in Greeter's descriptors decode")
}

/// Compiles `protos` (imports resolved in `imports`, then in each file's
/// own directory).
pub(crate) fn compile(protos: &[PathBuf], imports: &[PathBuf]) -> Result<DescriptorPool, String> {
    let mut includes: Vec<PathBuf> = imports.to_vec();
    for p in protos {
        if !p.is_file() {
            return Err(format!("cannot read --proto {}: no such file", p.display()));
        }
        let dir = p.parent().filter(|d| !d.as_os_str().is_empty());
        let dir = dir.unwrap_or(Path::new(".")).to_path_buf();
        if !includes.contains(&dir) {
            includes.push(dir);
        }
    }
    let one_line = |e: protox::Error| {
        let hint = match e.is_file_not_found() {
            true => " (give the directory imports are relative to with --import-path)",
            false => "",
        };
        format!("{}{hint}", e.to_string().replace('\n', " "))
    };
    let mut compiler = protox::Compiler::new(&includes).map_err(one_line)?;
    compiler.include_imports(true);
    compiler.open_files(protos).map_err(one_line)?;
    Ok(compiler.descriptor_pool())
}

/// The unary method `call` in `pool`; `source` says where the pool came
/// from, for errors.
pub(crate) fn find(pool: &DescriptorPool, call: &str, source: &str) -> Result<Method, String> {
    let (service, method) = split_call(call)?;
    let Some(svc) = pool.get_service_by_name(service) else {
        let known: Vec<String> = pool.services().map(|s| s.full_name().to_string()).collect();
        return Err(format!(
            "no service {service} in {source} (services: {})",
            list(&known)
        ));
    };
    let Some(m) = svc.methods().find(|m| m.name() == method) else {
        let known: Vec<String> = svc.methods().map(|m| m.name().to_string()).collect();
        return Err(format!(
            "service {service} has no method {method} (methods: {})",
            list(&known)
        ));
    };
    unary(&m)?;
    Ok(Method {
        name: format!("{service}/{method}"),
        path: format!("/{service}/{method}"),
        input: m.input(),
    })
}

fn unary(m: &MethodDescriptor) -> Result<(), String> {
    let kind = match (m.is_client_streaming(), m.is_server_streaming()) {
        (false, false) => return Ok(()),
        (true, true) => "bidirectional streaming",
        (true, false) => "client streaming",
        (false, true) => "server streaming",
    };
    Err(format!(
        "{} is a {kind} method: only unary methods can be called",
        m.full_name()
    ))
}

fn list(names: &[String]) -> String {
    match names.is_empty() {
        true => "none".to_string(),
        false => names.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_are_written_with_a_slash_or_a_dot() {
        assert_eq!(split_call("a.B/C").unwrap(), ("a.B", "C"));
        assert_eq!(split_call("/a.B/C").unwrap(), ("a.B", "C"));
        assert_eq!(split_call("a.B.C").unwrap(), ("a.B", "C"));
        assert!(split_call("C").is_err());
        assert!(split_call("a.B/").is_err());
    }

    #[test]
    fn the_greeter_is_known_and_other_names_are_refused_with_what_exists() {
        let pool = greeter_pool();
        let m = find(&pool, GREETER_CALL, "the built-in Greeter").unwrap();
        assert_eq!(m.path, "/helloworld.Greeter/SayHello");
        assert_eq!(m.input.full_name(), "helloworld.HelloRequest");
        let e = find(&pool, "helloworld.Greeter/Nope", "x").unwrap_err();
        assert!(e.contains("methods: SayHello"), "{e}");
        let e = find(&pool, "shop.Orders/Create", "x").unwrap_err();
        assert!(e.contains("services: helloworld.Greeter"), "{e}");
    }
}
