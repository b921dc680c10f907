import BrokerWire
import Testing

@Suite struct CredentialCodecTests {
  private func decode(_ s: String) throws -> CredentialMessage { try CredentialCodec.decode(Array(s.utf8)) }

  @Test func decodesAttributesInOrder() throws {
    let m = try decode("protocol=https\nhost=git.example.test:8443\npath=a/b.git\n\n")
    #expect(m.value("protocol") == "https")
    #expect(m.value("host") == "git.example.test:8443")
    #expect(m.fields.map(\.key) == ["protocol", "host", "path"])
  }

  @Test func valueMayContainEquals() throws {
    #expect(try decode("password=a=b==\n").value("password") == "a=b==")
  }

  @Test func endsAtBlankLineOrEOF() throws {
    #expect(try decode("host=a\n\nhost=b\n").value("host") == "a")
    #expect(try decode("host=a").value("host") == "a")
    #expect(try decode("").fields.isEmpty)
    #expect(try decode("\n").fields.isEmpty)
  }

  @Test func stripsOneCRBeforeLF() throws {
    #expect(try decode("host=a\r\nprotocol=https\r\n").value("host") == "a")
    #expect(throws: CredentialCodecError.carriageReturn(line: 1)) { try decode("host=a\r\r\n") }
  }

  @Test func multiValuedKeysAccumulateAndEmptyClears() throws {
    let m = try decode("capability[]=authtype\ncapability[]=state\nwwwauth[]=x\nwwwauth[]=\n")
    #expect(m.values("capability") == ["authtype", "state"])
    #expect(m.values("wwwauth").isEmpty)
  }

  // B15 (CVE-2020-5260): a repeated single-valued key is an error, never last-wins.
  @Test(arguments: ["host", "protocol", "password", "username", "path", "url"])
  func repeatedSingleValuedKeyIsRefused(key: String) {
    #expect(throws: CredentialCodecError.self) { try decode("protocol=https\n\(key)=evil\n\(key)=good\n") }
  }

  // B17 (CVE-2024-52006): a lone CR never ends a line; NUL is refused.
  // Keys are checked in a list while few and in a Set past that: a repeat is refused on both sides
  // of the switch, and many distinct keys pass.
  @Test(arguments: [1, 15, 16, 17, 40])
  func repeatedKeyIsRefusedAfterManyOthers(others: Int) throws {
    let distinct = (0..<others).map { "k\($0)=v\n" }.joined()
    #expect(try decode(distinct + "last=v\n").fields.count == others + 1)
    #expect(throws: CredentialCodecError.repeatedKey("k0", line: others + 1)) { try decode(distinct + "k0=w\n") }
    let last = "k\(others - 1)"
    #expect(throws: CredentialCodecError.repeatedKey(last, line: others + 2)) { try decode(distinct + "x=y\n" + last + "=w\n") }
  }

  @Test func loneCRAndNULAreRefused() {
    #expect(throws: CredentialCodecError.self) { try decode("protocol=https\nhost=evil.example\rhost=good\n") }
    #expect(throws: CredentialCodecError.self) { try decode("host=a\u{0}b\n") }
    #expect(throws: CredentialCodecError.self) { try CredentialCodec.decode([0x68, 0x3D, 0x0D]) }
  }

  // B17: Unicode line separators are ordinary bytes: they do not split lines.
  @Test(arguments: ["\u{85}", "\u{2028}", "\u{2029}", "\u{0B}", "\u{0C}"])
  func unicodeSeparatorsDoNotSplit(sep: String) throws {
    let m = try decode("protocol=https\nhost=evil.example\(sep)host=good\n")
    #expect(m.value("host") == "evil.example\(sep)host=good")
    #expect(m.fields.count == 2)
  }

  @Test func lineWithoutEqualsOrEmptyKeyIsRefused() {
    #expect(throws: CredentialCodecError.missingEquals(line: 2)) { try decode("protocol=https\nhost\n") }
    #expect(throws: CredentialCodecError.emptyKey(line: 1)) { try decode("=x\n") }
  }

  @Test func longLinesAreRefusedAtTheLimit() throws {
    let ok = "k=" + String(repeating: "a", count: CredentialCodec.maxLineBytes - 3) + "\n"
    #expect(try decode(ok).value("k")?.utf8.count == CredentialCodec.maxLineBytes - 3)
    let tooLong = "k=" + String(repeating: "a", count: CredentialCodec.maxLineBytes - 2) + "\n"
    #expect(throws: CredentialCodecError.lineTooLong(line: 1)) { try decode(tooLong) }
  }

  @Test func invalidUTF8IsRefused() {
    #expect(throws: CredentialCodecError.invalidUTF8(line: 1)) { try CredentialCodec.decode([0x68, 0x3D, 0xFF, 0x0A]) }
  }

  @Test func errorsNeverCarryValues() {
    do {
      _ = try decode("password=SENTINEL-SECRET-1\npassword=SENTINEL-SECRET-2\n")
      Issue.record("expected an error")
    } catch {
      #expect(!"\(error)".contains("SENTINEL"))
    }
  }

  @Test func encoderRefusesLineBreaksAndNUL() {
    for bad in ["a\nhost=evil", "a\rb", "a\u{0}b"] {
      #expect(throws: CredentialCodecError.self) { try CredentialCodec.encode([CredentialField("password", bad)]) }
    }
    #expect(throws: CredentialCodecError.self) { try CredentialCodec.encode([CredentialField("a=b", "c")]) }
    #expect(throws: CredentialCodecError.self) { try CredentialCodec.encode([CredentialField("", "c")]) }
  }

  @Test func encodesLines() throws {
    let bytes = try CredentialCodec.encode([CredentialField("username", "u"), CredentialField("password", "p=q")])
    #expect(String(decoding: bytes, as: UTF8.self) == "username=u\npassword=p=q\n")
  }

  /// Randomized round trip: any encodable message decodes back to itself.
  @Test func randomRoundTrip() throws {
    var rng = SplitMix(seed: 0x7ab1e)
    let alphabet = Array("abcXYZ09-_.:/ =é€😀\t\u{85}\u{2028}[]")
    for _ in 0..<2000 {
      var fields: [CredentialField] = []
      var used = Set<String>()
      for _ in 0..<Int(rng.next() % 6) {
        var key = String((0..<(1 + Int(rng.next() % 8))).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
        key = key.replacingOccurrences("=", "x")
        if key.hasSuffix("[]") || !used.insert(key).inserted { continue }
        let value = String((0..<Int(rng.next() % 20)).map { _ in alphabet[Int(rng.next() % UInt64(alphabet.count))] })
        fields.append(CredentialField(key, value))
      }
      let decoded = try CredentialCodec.decode(try CredentialCodec.encode(fields))
      #expect(decoded.fields == fields)
    }
  }

  /// Arbitrary bytes never crash the decoder, and whatever it accepts has at most one `host`, which
  /// is exactly the bytes of the first `host=` line.
  @Test func arbitraryBytesNeverCrashOrConfuseHost() {
    var rng = SplitMix(seed: 42)
    let pieces: [[UInt8]] = [
      Array("host=".utf8), Array("protocol=https".utf8), [0x0A], [0x0D], [0x00], [0x0D, 0x0A], Array("a".utf8),
      [0xFF], Array("=".utf8), Array("capability[]=authtype".utf8), Array("good.example".utf8),
    ]
    for _ in 0..<5000 {
      var bytes: [UInt8] = []
      for _ in 0..<Int(rng.next() % 12) { bytes += pieces[Int(rng.next() % UInt64(pieces.count))] }
      if let m = try? CredentialCodec.decode(bytes) {
        #expect(m.fields.filter { $0.key == "host" }.count <= 1)
        for f in m.fields {
          #expect(!f.value.utf8.contains(0x0A) && !f.value.utf8.contains(0x0D) && !f.value.utf8.contains(0))
        }
      }
    }
  }
}

/// A small deterministic generator, so failures reproduce.
struct SplitMix {
  var state: UInt64
  init(seed: UInt64) { state = seed }
  mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }
}

extension String {
  fileprivate func replacingOccurrences(_ a: Character, _ b: Character) -> String {
    String(map { $0 == a ? b : $0 })
  }
}
