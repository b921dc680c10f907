import BrokerWire
import Glibc

/// The uid that owns the client end of an accepted loopback TCP connection: from the kernel's
/// sock_diag lookup of that one socket (`TCPSocketDiag`), else from its socket tables
/// `/proc/net/tcp` and `/proc/net/tcp6` (proc(5): "the effective UID of the creator of the
/// socket"; reference: protocols-2.md §2.9); both report the same uid.
///
/// The client's row is the one whose *local* address is the peer address `accept` returned, whose
/// *remote* address is ours, in state `01` (ESTABLISHED). No such row, or rows that disagree, mean
/// "unknown", which callers treat as a refusal (a closed client's orphan row shows uid 0, which
/// must never pass for root).
public enum TCPPeerOwner {
  /// The owner uid of the client that `fd` (an accepted IPv4 connection) talks to, or nil.
  public static func uid(of fd: Int32) -> UInt32? {
    guard let peer = address(fd, peer: true), let mine = address(fd, peer: false) else { return nil }
    // One exact lookup first; the tables only when the kernel gives no answer that way.
    if let uid = TCPSocketDiag.owner(local: peer, remote: mine) { return uid }
    var found: Set<UInt32> = []
    for (file, format) in [("/proc/net/tcp", ipv4), ("/proc/net/tcp6", mappedIPv6)] {
      guard let table = KeyFileReader.readFile(file, limit: 64 << 20) else { continue }
      found.formUnion(owners(in: table, local: format(peer), remote: format(mine)))
    }
    return found.count == 1 ? found.first : nil
  }

  /// The uids of the ESTABLISHED rows of a `/proc/net/tcp{,6}` table with these endpoints
  /// (`ADDR:PORT` in the table's hex notation, upper case). Scans the bytes once, without a
  /// string per line or field: the table holds every socket of the machine (thousands on a busy
  /// one), and each accepted connection waits for this.
  static func owners(in table: [UInt8], local: String, remote: String) -> Set<UInt32> {
    let (local, remote) = (Array(local.utf8), Array(remote.utf8))
    var out: Set<UInt32> = []
    table.withUnsafeBufferPointer { t in
      var i = t.firstIndex(of: 10) ?? t.count  // past the header line
      while i < t.count {
        // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid …
        var field = 0
        var uid: UInt32?
        var matches = true
        while matches, field <= 7 {
          while i < t.count, t[i] == 32 { i += 1 }
          let start = i
          while i < t.count, t[i] != 32, t[i] != 10 { i += 1 }
          guard i > start else { break }
          let word = UnsafeBufferPointer(rebasing: t[start..<i])
          switch field {
          case 1: matches = word.elementsEqual(local)
          case 2: matches = word.elementsEqual(remote)
          case 3: matches = word.elementsEqual([48, 49])  // "01": ESTABLISHED
          case 7: uid = decimal(word)
          default: break
          }
          field += 1
        }
        if matches, let uid { out.insert(uid) }
        while i < t.count, t[i] != 10 { i += 1 }
        i += 1
      }
    }
    return out
  }

  private static func decimal(_ digits: UnsafeBufferPointer<UInt8>) -> UInt32? {
    var value: UInt32 = 0
    for d in digits {
      guard d >= 48, d <= 57 else { return nil }
      let (times, o1) = value.multipliedReportingOverflow(by: 10)
      let (sum, o2) = times.addingReportingOverflow(UInt32(d - 48))
      guard !o1, !o2 else { return nil }
      value = sum
    }
    return digits.isEmpty ? nil : value
  }

  /// `127.0.0.1:45887` as `/proc/net/tcp` prints it: the address word in host byte order
  /// (`%08X`; `0100007F` on little-endian machines), the port in normal order (`B33F`).
  static func ipv4(_ a: (address: UInt32, port: UInt16)) -> String {
    hex(a.address, digits: 8) + ":" + hex(UInt32(a.port), digits: 4)
  }

  /// The same IPv4 endpoint as a v4-mapped IPv6 row of `/proc/net/tcp6` (a client that connected
  /// from an AF_INET6 socket): `0000000000000000FFFF0000` then the address word.
  static func mappedIPv6(_ a: (address: UInt32, port: UInt16)) -> String {
    "0000000000000000" + hex(UInt32(0xFFFF).procWord, digits: 8) + ipv4(a)
  }

  /// `sockaddr_in` of either end: `s_addr` as the raw 32-bit word, the port in host order.
  private static func address(_ fd: Int32, peer: Bool) -> (address: UInt32, port: UInt16)? {
    var a = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let rc = withUnsafeMutablePointer(to: &a) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { peer ? getpeername(fd, $0, &length) : getsockname(fd, $0, &length) }
    }
    guard rc == 0, a.sin_family == sa_family_t(AF_INET) else { return nil }
    return (a.sin_addr.s_addr, UInt16(bigEndian: a.sin_port))
  }

  private static func hex(_ value: UInt32, digits: Int) -> String {
    let s = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - s.count)) + s
  }
}

extension UInt32 {
  /// The word whose bytes in memory are this value's big-endian bytes, read in host order: how
  /// `/proc/net/tcp6` prints each 32-bit quarter of an address (`FFFF` → `FFFF0000` on x86).
  fileprivate var procWord: UInt32 { UInt32(bigEndian: self) }
}
