internal import CBrokerShims

/// The resident code pages of the agent's whole process (the program's and every loaded
/// library's: libcurl, OpenSSL, GnuTLS, krb5, … about 5 MiB after a refresh, and the program's own
/// code that only a refresh runs).
public enum CodePages {
  /// Gives them back (madvise `MADV_DONTNEED` on read-only file-backed segments) when a libcurl
  /// transfer ran since the last call; they stay in the page cache and return as minor faults
  /// where they run next. For a process that lives on after its requests (the agent, which
  /// refreshes hourly); costs one atomic exchange otherwise.
  /// - Returns: bytes of mappings given back (0 when no transfer ran since the last call).
  @discardableResult public static func release() -> Int { cbroker_code_pages_release() }
}
