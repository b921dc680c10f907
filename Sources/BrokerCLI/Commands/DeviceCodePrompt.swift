import BrokerCore
import BrokerProviders
import BrokerSystem
import Synchronization

/// What `login` shows while a device code waits to be entered: always one stderr line with the
/// URL and the code; on a terminal (never to a pipe) also a QR code of the URL when the terminal
/// is wide enough, and a countdown to the code's expiry on one line that rewrites itself.
final class DeviceCodePrompt: Sendable {
  private let account: String
  private let context: ProcessContext
  private let countdown = Mutex<Task<Void, Never>?>(nil)

  init(account: String, context: ProcessContext) {
    self.account = account
    self.context = context
  }

  /// Shows `authorization` (the callback of `TokenService.loginWithDeviceCode`).
  func show(_ authorization: DeviceAuthorization) {
    let uri = TerminalText.clean(authorization.verificationURI)
    let code = TerminalText.clean(authorization.userCode)
    let minutes = max(1, authorization.expiresIn / 60)
    context.say("to sign in to '\(account)', open \(uri) and enter the code \(code) (valid for \(minutes) min)")
    guard context.isInteractive else { return }
    let target = TerminalText.clean(authorization.verificationURIComplete ?? authorization.verificationURI)
    if let qr = QRCode(target), let columns = terminalColumns(fd: 2), columns >= qr.columns {
      context.writeError(qr.lines().joined(separator: "\n") + "\n")
    }
    let expiresAt = authorization.issuedAt + Int64(authorization.expiresIn)
    let context = self.context
    let task = Task {
      while !Task.isCancelled {
        let left = max(0, expiresAt - SystemTime().now)
        let clock = "\(left / 60):" + (left % 60 < 10 ? "0" : "") + "\(left % 60)"
        context.writeError("\rtokenbroker: waiting for the code, \(clock) left (Ctrl-C cancels) ")
        try? await Task.sleep(for: .seconds(1))
      }
    }
    countdown.withLock { $0 = task }
  }

  /// Stops the countdown and clears its line; call when the flow has ended either way.
  func finish() {
    guard let task = countdown.withLock({ t -> Task<Void, Never>? in defer { t = nil }; return t }) else { return }
    task.cancel()
    context.writeError("\r" + String(repeating: " ", count: 64) + "\r")
  }
}
