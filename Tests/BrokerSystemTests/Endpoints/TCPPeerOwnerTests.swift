@testable import BrokerSystem
import Glibc
import Testing

/// The owner of a loopback TCP client from /proc/net/tcp{,6} (protocols-2.md §2.9).
struct TCPPeerOwnerTests {
  static let table = Array("""
      sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode
       0: 0100007F:B33F 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 1 1 0000000000000000 100 0 0 10 0
       1: 0100007F:9C40 0100007F:B33F 01 00000000:00000000 00:00000000 00000000 65534        0 2 1 0000000000000000 20 4 30 10 -1
       2: 0100007F:B33F 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 3 1 0000000000000000 20 4 30 10 -1
       3: 0100007F:9C41 0100007F:B33F 05 00000000:00000000 00:00000000 00000000     0        0 0 3 0000000000000000 20 4 30 10 -1
       4: 0100007F:9C42 0100007F:B33F 01 00000000:00000000 00:00000000 00000000   x12        0 0 3 0000000000000000 20 4 30 10 -1
       5: 0100007F:9C43 0100007F:B33F 01 00000000:00000000 00:00000000 00000000 4294967296   0 0 3 0000000000000000 20 4 30 10 -1
       6: 0100007F:9C44 0100007F:B33F 01 00000000:00000000
       7: 0100007F:9C45 0100007F:B33F 01 00000000:00000000 00:00000000 00000000  1001
    """.utf8)

  @Test func theClientsRowIsTheOneWhoseLocalEndIsThePeer() {
    #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:9C40", remote: "0100007F:B33F") == [65534])
    // A closed client's orphan row (FIN_WAIT2, uid 0) is no owner at all.
    #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:9C41", remote: "0100007F:B33F").isEmpty)
    #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:1234", remote: "0100007F:B33F").isEmpty)
    // Only the exact words: a prefix of an address is another address.
    #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:9C4", remote: "0100007F:B33F").isEmpty)
    #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:B33F", remote: "0100007F:9C40") == [1000])
  }

  @Test func aMalformedOrCutRowIsNoOwnerAndTheLastRowNeedsNoLineFeed() {
    for port in ["9C42", "9C43", "9C44"] {
      #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:" + port, remote: "0100007F:B33F").isEmpty, "\(port)")
    }
    #expect(TCPPeerOwner.owners(in: Self.table, local: "0100007F:9C45", remote: "0100007F:B33F") == [1001])
    #expect(TCPPeerOwner.owners(in: [], local: "0100007F:9C45", remote: "0100007F:B33F").isEmpty)
  }

  @Test func addressesArePrintedAsTheKernelPrintsThem() {
    let loopback = UInt32(0x7F00_0001).bigEndian  // s_addr of 127.0.0.1
    #expect(TCPPeerOwner.ipv4((loopback, 45887)) == "0100007F:B33F")
    #expect(TCPPeerOwner.mappedIPv6((loopback, 45887)) == "0000000000000000FFFF00000100007F:B33F")
  }
}
