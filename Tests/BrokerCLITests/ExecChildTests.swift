@testable import BrokerCLI
import Testing

/// COMMAND gets tokenbroker's arguments and environment byte for byte (as env(1) passes them),
/// less what exec removes or sets.
@Suite struct ExecChildTests {
  let latin1: [UInt8] = [0x63, 0x61, 0x66, 0xE9]  // "café" in Latin-1: not UTF-8

  @Test func argumentsAreTheKernelsBytesOfArgvsTail() {
    let raw: [[UInt8]] = [Array("tokenbroker-core".utf8), Array("exec".utf8), Array("work".utf8), Array("--".utf8),
      Array("printf".utf8), latin1]
    let parsed = ["printf", String(decoding: latin1, as: UTF8.self)]  // what CommandLine.arguments makes of it
    #expect(ExecChild.arguments(parsed, raw: raw) == [Array("printf".utf8), latin1])
    #expect(ExecChild.arguments(["true"], raw: nil) == [Array("true".utf8)])
    // Not argv's tail (a caller that rewrote its arguments): the parsed ones.
    #expect(ExecChild.arguments(["echo", "x"], raw: raw) == [Array("echo".utf8), Array("x".utf8)])
  }

  @Test func theEnvironmentKeepsItsBytesAndOrderLessRemovedAndSetNames() {
    let raw: [[UInt8]] = [Array("LANG=".utf8) + latin1, Array("AZURE_CLIENT_SECRET=s".utf8), Array("IDENTITY_HEADER=old".utf8),
      Array("PATH=/bin".utf8), Array("NOEQUALS".utf8)]
    let env = ExecChild.environment(
      raw: raw, environment: [:], removed: ["AZURE_CLIENT_SECRET"], added: [("IDENTITY_HEADER", "new"), ("X", "1")])
    #expect(env == [Array("LANG=".utf8) + latin1, Array("PATH=/bin".utf8), Array("NOEQUALS".utf8),
      Array("IDENTITY_HEADER=new".utf8), Array("X=1".utf8)])
    let decoded = ExecChild.environment(raw: nil, environment: ["A": "b"], removed: [], added: [])
    #expect(decoded == [Array("A=b".utf8)])
  }
}
