import BrokerWire
import Testing

@Suite struct AgentMessagesTests {
  private func text(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

  @Test func runRequestRoundTripsExactly() throws {
    let inputs = ["", "protocol=https\nhost=a\n\n", "one line without LF", "\n\n", "a\n\nb", "ü=ß\n"]
    for input in inputs {
      let r = AgentRequest.run(
        name: "git-credential-tokenbroker", arguments: ["get", "", "--x=y"], config: "/etc/x", input: Array(input.utf8))
      let decoded = try AgentRequest.decode(try r.encoded())
      #expect(decoded == r, "input \(input.debugDescription)")
    }
  }

  @Test func requestStartsWithVersionAndOperation() throws {
    let bytes = try AgentRequest.run(name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: []).encoded()
    #expect(text(bytes) == "v=1\nop=run\nname=tokenbroker\nconfig=\nbus=\narg[]=token\narg[]=get\narg[]=work\n")
  }

  @Test func forwardedEnvironmentTravelsAndNothingElse() throws {
    let info = #"{"kind":"ExecCredential","apiVersion":"client.authentication.k8s.io/v1beta1"}"#
    let r = AgentRequest.run(
      name: "tokenbroker", arguments: ["token", "get", "work"], config: "", input: [],
      environment: ["KUBERNETES_EXEC_INFO": info, "HOME": "/home/x", "PATH": "/bin"])
    #expect(r.environment == ["KUBERNETES_EXEC_INFO": info, "HOME": "/home/x"])
    let bytes = try r.encoded()
    #expect(text(bytes).contains("env[]=HOME=/home/x\nenv[]=KUBERNETES_EXEC_INFO=" + info + "\n"))
    #expect(try AgentRequest.decode(bytes) == r)
    // An agent takes only the carried names, whatever a client sends.
    let sent = Array("v=1\nop=run\nname=tokenbroker\nenv[]=LD_PRELOAD=/x.so\nenv[]=KUBERNETES_EXEC_INFO=a=b\n".utf8)
    #expect(try AgentRequest.decode(sent).environment == ["KUBERNETES_EXEC_INFO": "a=b"])
  }

  // The front's encoder (variables looked up, no Dictionary) writes exactly the request that
  // `run(...).encoded()` writes, and takes only the carried names.
  @Test func encodedRunMatchesTheRequestsEncoding() throws {
    let env = ["HOME": "/home/x", "XDG_CONFIG_HOME": "/home/x/.cfg", "TOKENBROKER_VERBOSE": "1", "PATH": "/bin"]
    for (input, vars) in [("protocol=https\nhost=a\n\n", env), ("", [:]), ("no LF", ["HOME": "/h"])] {
      let args = ["get", "--config=/etc/x"]
      let expected = try AgentRequest.run(
        name: "git-credential-tokenbroker", arguments: args, config: "/etc/x", input: Array(input.utf8), bus: "unix:path=/b",
        environment: vars
      ).encoded()
      let front = try AgentRequest.encodedRun(
        name: "git-credential-tokenbroker", arguments: args, config: "/etc/x", input: Array(input.utf8), bus: "unix:path=/b",
        environment: { vars[$0] })
      #expect(front == expected)
      #expect(!text(front).contains("PATH"))
    }
  }

  @Test func otherOperationsRoundTrip() throws {
    for r in [
      AgentRequest(operation: .drop, account: "work"), AgentRequest(operation: .drop), AgentRequest(operation: .status),
      AgentRequest(operation: .stop),
    ] {
      #expect(try AgentRequest.decode(try r.encoded()) == r)
    }
  }

  @Test func replyRoundTripsExactly() throws {
    for out in ["", "token\n", "no LF", "{\"a\":1}\n\n"] {
      let r = AgentReply(exit: 3, output: Array(out.utf8), error: Array("tokenbroker: x; y\n".utf8), pid: 42, programVersion: "0.1.0")
      #expect(try AgentReply.decode(try r.encoded()) == r)
    }
    #expect(try AgentReply.decode(try AgentReply.notServed.encoded()).exit == AgentProtocol.notServed)
  }

  @Test func unencodableValuesAreRefused() {
    #expect(throws: AgentMessageError.unencodable) {
      try AgentRequest.run(name: "tokenbroker", arguments: ["a\nb"], config: "", input: []).encoded()
    }
    #expect(throws: AgentMessageError.unencodable) {
      try AgentRequest.run(name: "tokenbroker", arguments: ["get"], config: "", input: Array("host=a\r\n".utf8)).encoded()
    }
    #expect(throws: AgentMessageError.unencodable) {
      try AgentRequest.run(name: "tokenbroker", arguments: ["get"], config: "", input: [0x68, 0x00, 0x0A]).encoded()
    }
    #expect(throws: AgentMessageError.unencodable) {
      try AgentRequest.run(name: "tokenbroker", arguments: ["get"], config: "", input: [0xFF, 0x0A]).encoded()
    }
    let big = [UInt8](repeating: UInt8(ascii: "a"), count: 40_000) + [0x0A]
    #expect(throws: AgentMessageError.unencodable) {
      try AgentRequest.run(name: "tokenbroker", arguments: ["get"], config: "", input: big + big).encoded()
    }
    #expect(throws: AgentMessageError.unencodable) { try AgentReply(exit: 0, output: [0x0D]).encoded() }
  }

  @Test func malformedMessagesAreRefused() {
    let cases: [(String, AgentMessageError)] = [
      ("op=run\nname=x\n", .unsupportedVersion),
      ("v=2\nop=run\nname=x\n", .unsupportedVersion),
      ("op=status\nv=1\n", .unsupportedVersion),
      ("v=1\nop=dance\n", .badField("op")),
      ("v=1\n", .badField("op")),
      ("v=1\nop=run\n", .badField("name")),
      ("v=1\nop=run\nname=a\nname=b\n", .malformed(.repeatedKey("name", line: 4))),
      ("v=1\nop=run\nname=a\rb\n", .malformed(.carriageReturn(line: 3))),
    ]
    for (message, error) in cases {
      #expect(throws: error, "\(message.debugDescription)") { try AgentRequest.decode(Array(message.utf8)) }
    }
    #expect(throws: AgentMessageError.malformed(.messageTooLarge)) {
      try AgentRequest.decode(Array("v=1\nop=status\n".utf8) + [UInt8](repeating: 0x0A, count: 70_000))
    }
    #expect(throws: AgentMessageError.badField("exit")) { try AgentReply.decode(Array("v=1\nexit=256\n".utf8)) }
    #expect(throws: AgentMessageError.badField("exit")) { try AgentReply.decode(Array("v=1\nexit=x\n".utf8)) }
  }

  @Test func emptyListValuesAreKeptNotClearing() throws {
    let r = try AgentRequest.decode(Array("v=1\nop=run\nname=t\narg[]=a\narg[]=\nin[]=x\nin[]=\n".utf8))
    #expect(r.arguments == ["a", ""])
    #expect(r.input == Array("x\n\n".utf8))
  }
}

@Suite struct StoreMessageTests {
  /// `unlock`, `lock` and `store` carry their fields as sent, in order.
  @Test func storeFieldsRoundTrip() throws {
    for op in [AgentOperation.unlock, .lock, .store] {
      var request = AgentRequest(operation: op)
      request.store = [CredentialField("store-op", "save"), CredentialField("path", "/d/tokens.enc"), CredentialField("secret", "{\"v\":1}")]
      let decoded = try AgentRequest.decode(try request.encoded())
      #expect(decoded == request)
      #expect(StoreMessage.value("path", in: decoded.store) == "/d/tokens.enc")
    }
  }

  /// The salt travels as lowercase hex digits and comes back byte for byte; anything else is no salt.
  @Test func hexRoundTrips() {
    let bytes: [UInt8] = [0, 1, 0x7f, 0x80, 0xab, 0xff]
    #expect(StoreMessage.hex(bytes) == "00017f80abff")
    #expect(StoreMessage.bytes(hex: StoreMessage.hex(bytes)) == bytes)
    for bad in ["0", "zz", "0g"] { #expect(StoreMessage.bytes(hex: bad) == nil) }
  }
}
