#!/usr/bin/env ruby
# The Bolt task hierad_resources::upload (tasks/upload.json): its
# parameters as JSON on stdin, its result as JSON on stdout; a failure is
# Bolt's error object and exit status 1. The work is
# PuppetX::Hierad::Upload, on the hierad module's HTTP client: Bolt copies
# both beside the task (`files` in the metadata, under `_installdir`).
require 'json'
require 'socket'

params = JSON.parse($stdin.read)
modules = params['_installdir'] || File.expand_path('../..', __dir__)
%w[hierad hierad_resources].each { |m| $LOAD_PATH.unshift(File.join(modules, m, 'lib')) }
require 'puppet_x/hierad_resources/upload'

begin
  options = params.reject { |k, _| k.start_with?('_') }
  unless options.key?('level')
    fqdn = Addrinfo.getaddrinfo(Socket.gethostname, nil).first&.canonname || Socket.gethostname
    options['level'] = "nodes=#{fqdn}"
  end
  result = PuppetX::Hierad::Upload.run(options)
  puts JSON.generate(result.merge('level' => options['level']))
rescue PuppetX::Hierad::Error, ArgumentError, KeyError => e
  puts JSON.generate('_error' => { 'msg' => e.message, 'kind' => 'hierad/upload-failed', 'details' => {} })
  exit 1
end
