import BrokerAgent
import BrokerCore
import BrokerProviders
import BrokerSystem
import BrokerWire

/// The one place errors become an exit status and a message (interface.md §6).
enum ErrorMapping {
  struct Mapped {
    var status: ExitStatus
    var message: String
  }

  static func map(_ error: any Error) -> Mapped {
    switch error {
    case let e as UsageError: return Mapped(status: .usage, message: e.message)
    case let e as ConfigError: return Mapped(status: .usage, message: e.description)
    case let e as StoreError: return Mapped(status: .storeUnavailable, message: e.description)
    case let e as HTTPError: return Mapped(status: .providerUnavailable, message: e.description)
    case let e as ProviderError: return Mapped(status: status(of: e), message: e.description)
    case let e as RegistryError: return Mapped(status: status(of: e), message: e.description)
    case let e as SystemError:
      if case .loginInProgress = e { return Mapped(status: .loginInProgress, message: e.description) }
      if case .redirectPortTaken = e { return Mapped(status: .loginIncomplete, message: e.description) }
      return Mapped(status: .failure, message: e.description)
    case let e as CredentialCodecError:
      return Mapped(status: .failure, message: "malformed credential request: \(e); nothing was looked up")
    case let e as HelperError: return Mapped(status: e.status, message: e.description)
    case let e as ForwardRefusal: return Mapped(status: e.exitStatus, message: e.description)
    case let e as AgentSetupError: return Mapped(status: .failure, message: e.description)
    default:
      return Mapped(status: .failure, message: "unexpected error (\(type(of: error))); run again with --verbose and report a bug")
    }
  }

  static func status(of e: RegistryError) -> ExitStatus {
    switch e {
    case .refused: return .signInRequired
    case .notFound, .rejected: return .failure
    case .unavailable: return .providerUnavailable
    }
  }

  static func status(of e: ProviderError) -> ExitStatus {
    switch e {
    case .signInRequired, .stepUpRequired, .refusedByPolicy, .refusedWithoutReason: return .signInRequired
    case .declined, .deviceCodeBlocked, .deviceCodeExpired, .loginTimedOut, .loginFailed: return .loginIncomplete
    case .unavailable, .throttled: return .providerUnavailable
    case .rejected: return .failure
    case .unsupported: return .usage
    case .clientRejected: return .usage  // a configuration problem (bug-cases-3.md X05)
    }
  }
}
