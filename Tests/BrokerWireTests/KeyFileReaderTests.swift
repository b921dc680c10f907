import BrokerWire
import Glibc
import Testing

@Suite struct KeyFileReaderTests {
  private func value(_ text: String, _ group: String = "broker", _ key: String = "agent") -> String? {
    KeyFileReader.value(group: group, key: key, in: Array(text.utf8))
  }

  @Test func readsTrimmedValuesOfTheRightGroup() {
    #expect(value("[broker]\nagent = off\n") == "off")
    #expect(value("[broker]\n  agent=off   \n") == "off")
    #expect(value("[account work]\nagent = off\n") == nil)
    #expect(value("agent = off\n[broker]\n") == nil)
    #expect(value("[broker]\nstore = file\n") == nil)
    #expect(value("[broker]\r\nagent = off\r\n") == "off")
  }

  @Test func commentsOnlyAtLineStart() {
    #expect(value("[broker]\n# agent = off\n") == nil)
    #expect(value("[broker]\n   # agent = off\n") == nil)
    #expect(value("[broker]\nagent = off # not a comment\n") == "off # not a comment")
  }

  @Test func laterValuesAndRepeatedGroupsWin() {
    #expect(value("[broker]\nagent = off\nagent = auto\n") == "auto")
    #expect(value("[broker]\nagent = off\n[account a]\nagent = x\n[broker]\nagent = auto\n") == "auto")
    #expect(value("[broker]\nagent[de] = off\n") == nil)
    #expect(value("[broker]\nagent = \\soff\n") == "\\soff")
  }

  @Test func laterFilesWinKeyByKey() throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-kf-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    func write(_ name: String, _ text: String) -> String {
      let path = dir + "/" + name
      let f = fopen(path, "w")
      fputs(text, f)
      fclose(f)
      return path
    }
    let etc = write("etc", "[broker]\nagent = off\n")
    let user = write("user", "[broker]\nstore = file\n")
    let over = write("over", "[broker]\nagent = auto\n")
    #expect(KeyFileReader.value(group: "broker", key: "agent", files: [etc, user]) == "off")
    #expect(KeyFileReader.value(group: "broker", key: "agent", files: [etc, over]) == "auto")
    #expect(KeyFileReader.value(group: "broker", key: "agent", files: [dir + "/missing", user]) == nil)
  }

  // The front asks whether an agent may start: `agent = off` counts wherever it stands, past 1 MiB
  // of comments too (the file was once read only to 1 MiB), and lines cut by the reader's chunks
  // are whole again (padding of every length around a chunk).
  @Test(arguments: [0, 1, 8191, 8192, 8193, 1 << 20, (1 << 20) + 8191])
  func settingsPastAnySizeCount(padding: Int) throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-kf-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let path = dir + "/config"
    var text = Array(repeating: UInt8(ascii: "#"), count: padding)
    if padding > 0 { text.append(0x0A) }
    text += Array("[broker]\nagent = off\n[other]\nagent = auto".utf8)
    let f = try #require(fopen(path, "w"))
    _ = text.withUnsafeBytes { fwrite($0.baseAddress, 1, $0.count, f) }
    fclose(f)
    #expect(KeyFileReader.value(group: "broker", key: "agent", files: [path]) == "off")
    #expect(KeyFileReader.value(group: "other", key: "agent", files: [path]) == "auto")
  }

  /// `limit` is exact: never the rest of the last 8 KiB chunk read past it.
  @Test(arguments: [0, 1, 100, 8191, 8192, 8193, 20000])
  func aFileIsReadUpToExactlyTheLimit(limit: Int) throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-kf-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let path = dir + "/long"
    let text = String(repeating: "0123456789", count: 1500)  // 15000 bytes
    let f = fopen(path, "w")
    fputs(text, f)
    fclose(f)
    let read = try #require(KeyFileReader.readFile(path, limit: limit))
    #expect(read.count == min(limit, 15000))
    #expect(read == Array(text.utf8.prefix(limit)))
  }

  /// A config file that is not a regular file is refused as GKeyFile refuses it ("Not a regular
  /// file"), at once: a FIFO nobody writes must not block the reader (the agent's socket loop
  /// reads the config for every kept answer), a device such as /dev/zero must not be read forever.
  @Test func aFileThatIsNotRegularIsRefusedWithoutBlocking() throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-kf-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let fifo = dir + "/fifo"
    #expect(mkfifo(fifo, 0o600) == 0)
    #expect(KeyFileReader.readFile(fifo, limit: 4096) == nil)
    #expect(KeyFileReader.value(group: "broker", key: "agent", files: [fifo]) == nil)
    #expect(KeyFileReader.readFile("/dev/zero", limit: 4096) == nil)
    #expect(KeyFileReader.value(group: "broker", key: "agent", files: ["/dev/zero"]) == nil)
    #expect(KeyFileReader.readFile(dir, limit: 4096) == nil)
  }

  /// `followLinks: false` refuses a symbolic link (gcloud's and the refresh hold's directories),
  /// and reads /proc files, whose size says 0, to their end.
  @Test func aLinkIsRefusedWhenLinksAreNotFollowedAndProcFilesAreReadWhole() throws {
    let dir = String(cString: mkdtemp(strdup("/tmp/tb-kf-XXXXXX")))
    defer { _ = system("rm -rf '\(dir)'") }
    let f = fopen(dir + "/file", "w")
    fputs("x=1\n", f)
    fclose(f)
    #expect(symlink(dir + "/file", dir + "/link") == 0)
    #expect(KeyFileReader.readFile(dir + "/link", limit: 64) == Array("x=1\n".utf8))
    #expect(KeyFileReader.readFile(dir + "/link", limit: 64, followLinks: false) == nil)
    #expect(KeyFileReader.readFile(dir + "/file", limit: 64, followLinks: false) == Array("x=1\n".utf8))
    let status = try #require(KeyFileReader.readFile("/proc/self/status", limit: 65536))
    #expect(String(decoding: status, as: UTF8.self).contains("VmRSS:"))
  }
}
