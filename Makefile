# tokenbroker — see README.md.
#   make demo     install what is missing, build, and run the main job against the bundled emulator
#   make check    install the test dependencies and run every test (keyring tests in a private D-Bus session)
#   make deps     install the Debian packages the build and tests need (sudo when not root)
#   make install  release build, copied under $(DESTDIR)$(PREFIX)

PREFIX ?= /usr/local
DESTDIR ?=
SWIFT ?= swift
PYTHON ?= python3

# Build: libsecret and libcurl headers. Tests and demo: a real keyring on a private bus, git,
# curl, openssl for the emulator's certificates, and python3-dbus/gi for the fake Secret Service.
DEPS = pkg-config libsecret-1-dev libcurl4-openssl-dev gnome-keyring dbus libsecret-tools \
       libglib2.0-bin git openssl curl python3 python3-dbus python3-gi python3-venv
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: all build release deps install uninstall demo check unit integration fidelity clean

all: build

build:
	$(SWIFT) build

release:
	$(SWIFT) build -c release --static-swift-stdlib

deps:
	@missing=""; for p in $(DEPS); do \
	  dpkg-query -W -f='$${Status}\n' $$p 2>/dev/null | grep -q '^install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then echo "deps: all packages present"; \
	else echo "deps: installing$$missing"; \
	  $(SUDO) apt-get update -qq && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; fi

install: release
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/libexec/tokenbroker
	install -m 0755 .build/release/tokenbroker $(DESTDIR)$(PREFIX)/bin/tokenbroker
	install -m 0755 .build/release/tokenbroker-core $(DESTDIR)$(PREFIX)/libexec/tokenbroker/tokenbroker-core
	ln -sf tokenbroker $(DESTDIR)$(PREFIX)/bin/git-credential-tokenbroker

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/tokenbroker $(DESTDIR)$(PREFIX)/bin/git-credential-tokenbroker
	rm -rf $(DESTDIR)$(PREFIX)/libexec/tokenbroker

demo: deps build
	scripts/demo

check: deps
	scripts/check

# Parts of check, for development.
unit: build
	scripts/check unit
integration: build
	scripts/check integration
# The emulator against MSAL Python (needs PyPI).
fidelity:
	Tests/Emulator/check_fidelity.sh

clean:
	rm -rf .build
