import BrokerCore
import BrokerHTTP
import BrokerStore

/// `tokenbroker version`: the program's, libcurl's and libsecret's versions.
enum VersionCommand {
  static func run(_ args: [String], runtime: Runtime) throws -> ExitStatus {
    let a = try Arguments(args, command: "version")
    _ = try a.expectPositionals([])
    if a.flag("json") {
      struct Doc: Encodable { var tokenbroker, libcurl, libsecret: String }
      runtime.context.writeOutput(
        JSONText.encode(Doc(tokenbroker: BrokerCommand.version, libcurl: CurlTransport.libraryVersion, libsecret: LibsecretStore.libraryVersion)) + "\n")
    } else {
      runtime.context.writeOutput(
        "tokenbroker \(BrokerCommand.version)\n\(CurlTransport.libraryVersion)\n\(LibsecretStore.libraryVersion)\n")
    }
    return .success
  }
}
