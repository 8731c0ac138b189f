import Foundation

/// A Python venv with `requests` (and so certifi) from PyPI, made once per test process under the
/// temporary folder and removed when the process ends; nil (with the reason) when PyPI cannot
/// be reached or the venv cannot be made, so a test can skip saying why.
enum PyPIVenv {
    /// The venv's folder, or why there is none.
    static let shared: Result<String, TestError> = {
        let dir = NSTemporaryDirectory() + "tv-proxyenv-venv-\(getpid())"
        atexit { try? FileManager.default.removeItem(atPath: NSTemporaryDirectory() + "tv-proxyenv-venv-\(getpid())") }
        let made = Shell.run(["python3", "-m", "venv", dir], timeout: 120)
        guard made.status == 0 else { return .failure(TestError("python3 -m venv failed: \(made.err)")) }
        let pip = Shell.run([dir + "/bin/pip", "install", "--quiet", "--disable-pip-version-check", "requests"], timeout: 240)
        guard pip.status == 0 else { return .failure(TestError("PyPI is not reachable (pip install requests failed: \(pip.err.prefix(300)))")) }
        return .success(dir)
    }()

    /// The venv's folder; throws the reason there is none.
    static func require() throws -> String {
        switch shared {
        case .success(let dir): return dir
        case .failure(let reason): throw reason
        }
    }
}

extension PyPIVenv {
    /// Whether the venv could be made (makes it on first use).
    static var available: Bool {
        if case .success = shared { return true }
        return false
    }
}

extension PyPIVenv {
    /// The venv's python3 with `websockets` 15.0.1 added (Debian 12's python3-websockets is 10.4,
    /// without the sync client and server `WebSocketRunTests` use), installed once; throws why not.
    static let websockets: Result<String, TestError> = {
        switch shared {
        case .failure(let reason): return .failure(reason)
        case .success(let dir):
            let pip = Shell.run([dir + "/bin/pip", "install", "--quiet", "--disable-pip-version-check", "websockets==15.0.1"], timeout: 240)
            guard pip.status == 0 else { return .failure(TestError("pip install websockets==15.0.1 failed: \(pip.err.prefix(300))")) }
            return .success(dir + "/bin/python3")
        }
    }()
}
