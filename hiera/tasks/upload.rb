#!/usr/bin/env ruby
# The Bolt task hierad::upload (tasks/upload.json): its parameters as JSON
# on stdin, its result as JSON on stdout; a failure is Bolt's error object
# and exit status 1. The work is PuppetX::Hierad::Upload, which Bolt copies
# beside the task (`files` in the metadata, under `_installdir`).
require 'json'
require 'socket'

params = JSON.parse($stdin.read)
lib = if params['_installdir']
        File.join(params['_installdir'], 'hierad', 'lib')
      else
        File.expand_path('../lib', __dir__)
      end
require File.join(lib, 'puppet_x', 'hierad', 'upload')

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
