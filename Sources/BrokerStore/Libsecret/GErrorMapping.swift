internal import BrokerCore
internal import CLibsecret

/// Turns a `GError` from libsecret/GDBus into a `StoreError` and frees it. Call exactly once per
/// non-nil error. GLib messages name objects and causes, never secret values (bug-cases.md B29).
///
/// - `deadline` expired (the call was cancelled by our timer), or a D-Bus timeout: `.timedOut`.
/// - `SECRET_ERROR_IS_LOCKED` (protocols.md §5.3): `.locked`.
/// - no bus, no service, activation failure (keyring-notes.md): `.unavailable` (also every error
///   while connecting when `connecting` is true), except a service that cannot make the encrypted
///   session for want of its crypto plugins (kwalletd without libqca-qt5-2-plugins says "maybe
///   libqca-ossl is missing"): `.sessionRefused`, since starting another keyring is no answer.
/// - anything else: `.backend`.
func consume(_ error: UnsafeMutablePointer<GError>, deadline: Deadline, connecting: Bool = false) -> StoreError {
  defer { g_error_free(error) }
  let domain = error.pointee.domain
  let code = error.pointee.code
  if deadline.expired { return .timedOut(seconds: deadline.seconds) }
  g_dbus_error_strip_remote_error(error)
  let message = error.pointee.message.map { String(cString: $0) } ?? "unknown error"

  if domain == g_io_error_quark() {
    if code == Int32(G_IO_ERROR_TIMED_OUT.rawValue) { return .timedOut(seconds: deadline.seconds) }
  }
  if domain == g_dbus_error_quark() {
    let timeouts: [GDBusError] = [G_DBUS_ERROR_NO_REPLY, G_DBUS_ERROR_TIMEOUT, G_DBUS_ERROR_TIMED_OUT]
    if timeouts.contains(where: { Int32($0.rawValue) == code }) { return .timedOut(seconds: deadline.seconds) }
    let absent: [GDBusError] = [
      G_DBUS_ERROR_SERVICE_UNKNOWN, G_DBUS_ERROR_NAME_HAS_NO_OWNER, G_DBUS_ERROR_NO_SERVER,
      G_DBUS_ERROR_DISCONNECTED, G_DBUS_ERROR_SPAWN_EXEC_FAILED, G_DBUS_ERROR_SPAWN_FORK_FAILED,
      G_DBUS_ERROR_SPAWN_CHILD_EXITED, G_DBUS_ERROR_SPAWN_CHILD_SIGNALED, G_DBUS_ERROR_SPAWN_FAILED,
      G_DBUS_ERROR_SPAWN_SETUP_FAILED, G_DBUS_ERROR_SPAWN_CONFIG_INVALID, G_DBUS_ERROR_SPAWN_SERVICE_INVALID,
      G_DBUS_ERROR_SPAWN_SERVICE_NOT_FOUND, G_DBUS_ERROR_SPAWN_PERMISSIONS_INVALID,
      G_DBUS_ERROR_SPAWN_FILE_INVALID, G_DBUS_ERROR_SPAWN_NO_MEMORY,
    ]
    if absent.contains(where: { Int32($0.rawValue) == code }) { return .unavailable(detail: message) }
  }
  if domain == secret_error_get_quark() && code == Int32(SECRET_ERROR_IS_LOCKED.rawValue) { return .locked }
  if connecting && message.lowercased().contains("libqca") { return .sessionRefused(detail: message) }
  return connecting ? .unavailable(detail: message) : .backend(detail: message)
}

/// True when `error` (not consumed) says the object a call addressed is not there: libsecret's
/// "No such secret item at path" (`G_DBUS_ERROR_UNKNOWN_METHOD`, when an item's properties
/// cannot load), the Secret Service's `NoSuchObject`, or D-Bus `UnknownObject`: the three that
/// libsecret itself reads as "absent" (secret-methods.c); and kwalletd's answer to `GetSecrets` of
/// a path that is no item, `InvalidArgs` "Can't find item at path …". After a search found the
/// item, it means another process deleted it meanwhile (a `logout`), not that the keyring failed.
func isNoSuchObject(_ error: UnsafeMutablePointer<GError>) -> Bool {
  let (domain, code) = (error.pointee.domain, error.pointee.code)
  if domain == secret_error_get_quark() { return code == Int32(SECRET_ERROR_NO_SUCH_OBJECT.rawValue) }
  guard domain == g_dbus_error_quark() else { return false }
  if code == Int32(G_DBUS_ERROR_INVALID_ARGS.rawValue), let message = error.pointee.message {
    return String(cString: message).contains("Can't find item at path ")
  }
  return code == Int32(G_DBUS_ERROR_UNKNOWN_METHOD.rawValue) || code == Int32(G_DBUS_ERROR_UNKNOWN_OBJECT.rawValue)
}

/// True when `error` (not consumed) is kwalletd refusing the session's Diffie-Hellman public key
/// for its length, `InvalidArgs` "Client public key size is invalid": it takes only 128-byte keys,
/// and libsecret sends a key without its leading zero bytes (one key in 256 is shorter).
func isShortKeyRefused(_ error: UnsafeMutablePointer<GError>) -> Bool {
  guard error.pointee.domain == g_dbus_error_quark(), error.pointee.code == Int32(G_DBUS_ERROR_INVALID_ARGS.rawValue),
    let message = error.pointee.message
  else { return false }
  return String(cString: message).contains("Client public key size is invalid")
}

/// True when a store operation failed because the service and libsecret derived different keys
/// for the session (README "Keyrings"): kwalletd answers an item it cannot decrypt with "Can't
/// find session …" (its own `CreateItem`/`SetSecret` wording, though the session is there), and
/// libsecret a secret it cannot decrypt with "Received invalid secret from the secret storage".
/// kwalletd 5 derives the key from the Diffie-Hellman shared secret without its leading zero
/// bytes (libsecret keeps all 128), and reads a client key that begins with 0xff as another number;
/// about one session in 170 is such. A new session (a new connection) has a new key.
func isSessionKeyMismatch(_ error: StoreError) -> Bool {
  guard case .backend(let detail) = error else { return false }
  return detail.hasPrefix("Can't find session ") || detail == "Received invalid secret from the secret storage"
}

/// True when `error` (not consumed) is libsecret's own "No such secret item at path: …" (a
/// `G_DBUS_ERROR_UNKNOWN_METHOD` raised when a new item proxy's properties cannot load), which
/// after `CreateItem` answered means the item was deleted at once, not that CreateItem failed
/// (that comes as the service's `NoSuchObject`, `UnknownObject` or an `UnknownMethod` of its own
/// wording). libsecret's messages are untranslated here: no tokenbroker process sets a locale.
func isCreatedItemGone(_ error: UnsafeMutablePointer<GError>) -> Bool {
  guard error.pointee.domain == g_dbus_error_quark(), error.pointee.code == Int32(G_DBUS_ERROR_UNKNOWN_METHOD.rawValue),
    let message = error.pointee.message
  else { return false }
  return String(cString: message).hasPrefix("No such secret item at path: ")
}
