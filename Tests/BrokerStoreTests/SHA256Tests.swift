import Testing

@testable import BrokerStore

@Suite("SHA256")
struct SHA256Tests {
  private func hex(_ bytes: [UInt8]) -> String {
    bytes.map { String($0, radix: 16).count == 1 ? "0" + String($0, radix: 16) : String($0, radix: 16) }.joined()
  }

  @Test func knownVectors() {
    #expect(hex(SHA256.digest("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(hex(SHA256.digest([])) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    // RFC 7636 appendix B: the verifier's digest (base64url: E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM).
    let verifier = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"
    #expect(hex(SHA256.digest(verifier)) == "13d31e961a1ad8ec2f16b10c4c982e0876a878ad6df144566ee1894acb70f9c3")
  }
}
