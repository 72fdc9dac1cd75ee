# The shim needs Ruby's standard library only: no gems, no C extensions of
# its own. Loaded in a fresh Ruby with RubyGems disabled (a gem would fail
# to load), everything it adds to $LOADED_FEATURES must come from
# Ruby's own library directories or from hiera/lib.
require_relative 'test_helper'
require 'rbconfig'

class DependenciesTest < Minitest::Test
  LIB = File.expand_path('../lib', __dir__)

  PROBE = <<~'RUBY'.freeze
    require 'rbconfig'
    require 'hiera' # the host the backend runs in, not the shim's dependency
    before = $LOADED_FEATURES.dup
    require 'hiera/backend/hierad_backend'
    require 'puppet_x/hierad/hiera5'
    # TLS is loaded on first use, as in the `hiera` command (which has no
    # openssl of its own): a handshake with a server that hangs up.
    server = TCPServer.new('127.0.0.1', 0)
    Thread.new { loop { server.accept.close } }
    begin
      PuppetX::Hierad::Client.new(url: "https://127.0.0.1:#{server.addr[1]}").get('/')
    rescue PuppetX::Hierad::Error => e
      tls = e.message
    end
    puts tls.inspect, RbConfig::CONFIG['rubylibdir'], RbConfig::CONFIG['rubyarchdir'], '--'
    puts $LOADED_FEATURES - before
  RUBY

  def test_only_the_standard_library_is_loaded
    hiera_dir = $LOAD_PATH.find { |d| File.file?(File.join(d, 'hiera.rb')) } or skip 'Hiera is not on the load path'
    out = IO.popen([RbConfig.ruby, '--disable-gems', '-I', LIB, '-I', hiera_dir, '-e', PROBE], err: %i[child out], &:read)
    assert $?.success?, out
    head, features = out.split("--\n", 2).map(&:lines)
    tls, *dirs = head.map(&:chomp)
    assert_match(/TLS: /, tls)
    features = features.map(&:chomp)
    shim = features.select { |f| f.start_with?("#{LIB}/") }.map { |f| f.delete_prefix("#{LIB}/") }
    assert_equal %w[hiera/backend/hierad_backend.rb puppet_x/hierad/cache.rb puppet_x/hierad/client.rb
                    puppet_x/hierad/connection.rb puppet_x/hierad/hiera5.rb puppet_x/hierad/wire.rb], shim.sort
    foreign = features.reject do |f|
      f.start_with?("#{LIB}/") || dirs.any? { |d| f.start_with?("#{d}/") } ||
        # JRuby's built-in library lives in its jar.
        f.start_with?('uri:classloader:') || !f.start_with?('/')
    end
    assert_empty foreign, 'the shim loaded code from outside Ruby\'s standard library'
    assert features.any? { |f| f.include?('openssl') }, "the probe did not load TLS: #{features.inspect}"
  end

  # The module's metadata: what Puppet reads when it installs or lists it.
  def test_module_metadata
    meta = JSON.parse(File.read(File.expand_path('../metadata.json', __dir__)))
    assert_equal 'hierad-hierad', meta['name']
    assert_equal [], meta['dependencies']
    %w[hiera/backend/hierad_backend.rb puppet/functions/hierad/data_hash.rb puppet/functions/hierad/lookup_key.rb].each do |f|
      assert File.file?(File.join(LIB, f)), f
    end
  end
end
