import BrokerCore
import Testing

@testable import BrokerStore

/// What each Secret Service answer becomes (README "Keyrings"): kwalletd's own wordings included.
@Suite struct GErrorMappingTests {
  static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"

  @Test func kwalletdsItemNotFoundIsAnItemGone() {
    #expect(GErrorMappingProbe.isNoSuchObject(Self.invalidArgs, "Can't find item at path /org/freedesktop/secrets/collection/kdewallet/3"))
    #expect(!GErrorMappingProbe.isNoSuchObject(Self.invalidArgs, "Invalid session"))
    #expect(GErrorMappingProbe.isNoSuchObject("org.freedesktop.Secret.Error.NoSuchObject", "gone"))
  }

  @Test func kwalletdRefusingAShortSessionKeyIsToldApart() {
    #expect(GErrorMappingProbe.isShortKeyRefused(Self.invalidArgs, "Client public key size is invalid"))
    #expect(!GErrorMappingProbe.isShortKeyRefused(Self.invalidArgs, "createDLGroup failed: maybe libqca-ossl is missing"))
    #expect(!GErrorMappingProbe.isShortKeyRefused("org.freedesktop.DBus.Error.Failed", "Client public key size is invalid"))
  }
}
