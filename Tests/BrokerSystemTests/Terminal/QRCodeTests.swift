import BrokerSystem
import Testing

@Suite struct QRCodeTests {
  /// The 7×7 finder pattern of ISO/IEC 18004 §6.3.3 stands in three corners.
  @Test func finderPatternsInThreeCorners() throws {
    let qr = try #require(QRCode("https://microsoft.com/devicelogin"))
    #expect(qr.size >= 21 && (qr.size - 21) % 4 == 0)
    let finder: [[Bool]] = (0..<7).map { y in
      (0..<7).map { x in
        let ring = min(x, y, 6 - x, 6 - y)
        return ring != 1
      }
    }
    func block(_ x0: Int, _ y0: Int) -> [[Bool]] { (0..<7).map { y in (0..<7).map { x in qr.modules[y0 + y][x0 + x] } } }
    #expect(block(0, 0) == finder)
    #expect(block(qr.size - 7, 0) == finder)
    #expect(block(0, qr.size - 7) == finder)
  }

  @Test func linesHaveTheQuietZoneAndHalfTheRows() throws {
    let qr = try #require(QRCode("https://example.test/device?code=ABC"))
    let lines = qr.lines()
    #expect(lines.count == (qr.size + 4 + 1) / 2)
    #expect(lines.allSatisfy { $0.count == qr.columns })
    #expect(lines[0] == String(repeating: "█", count: qr.columns))  // quiet zone: light
  }
}
