# The HTTP client of the hierad shim: failover over several URLs,
# timeouts, token, Basic or Keystone credentials, TLS with a CA file and
# a client certificate (a Puppet master's own: cert_file/key_file), keep-alive
# connections shared safely between threads (connection.rb).
require_relative 'connection'

module PuppetX
  module Hierad
    # The client of one hierad service: one or more URLs tried in order
    # (the last one that answered first), with credentials and timeouts.
    class Client
      OPTIONS = %i[url token token_file user password password_file keystone_token keystone_token_file
                   ca_file cert_file key_file connect_timeout read_timeout].freeze
      # Credentials read from a file (its first line), so that hiera.yaml,
      # which every user of the machine may read, holds no secret.
      SECRET_FILES = { token_file: :token, password_file: :password, keystone_token_file: :keystone_token }.freeze
      DEFAULTS = { connect_timeout: 2.0, read_timeout: 10.0 }.freeze

      @shared = {}
      @mutex = Mutex.new

      # One client per server configuration, shared by every lookup in
      # this Ruby, and so are its keep-alive sessions.
      def self.shared(options)
        options = options.to_h { |k, v| [k.to_sym, v] }.slice(*OPTIONS)
        @mutex.synchronize { @shared[options] ||= new(options) }
      end

      attr_reader :urls

      # OPTIONS, with String or Symbol keys.
      def initialize(options)
        options = options.to_h { |k, v| [k.to_sym, v] }
        urls = Array(options[:url]).flatten.map(&:to_s).reject(&:empty?)
        raise Error, 'hierad: no server url configured (set url: to one URL or a list)' if urls.empty?
        if options[:cert_file].nil? != options[:key_file].nil?
          raise Error, 'hierad: cert_file and key_file go together (a Puppet master: its hostcert and hostprivkey)'
        end

        # OpenSSL reads these itself, and would wait forever on a FIFO.
        %i[ca_file cert_file key_file].each do |file|
          path = options[file]
          raise Error, "hierad: #{file} #{path} is not a regular file" if path && File.exist?(path.to_s) && !File.file?(path.to_s)
        end
        SECRET_FILES.each do |file, value|
          raise Error, "hierad: give #{value} or #{file}, not both" if options[file] && options[value]
        end
        raise Error, 'hierad: password_file goes with user' if options[:password_file] && !options[:user]

        @options = options
        @secrets = read_secrets
        @read_timeout = seconds(options, :read_timeout)
        settings = {
          connect_timeout: seconds(options, :connect_timeout),
          read_timeout: seconds(options, :read_timeout),
          ca_file: options[:ca_file],
          cert_file: options[:cert_file],
          key_file: options[:key_file],
          headers: headers(options.merge(@secrets))
        }
        @endpoints = urls.map { |u| Endpoint.new(u, settings) }
        @urls = @endpoints.map(&:url)
        @preferred = 0
        @mutex = Mutex.new
      end

      def get(path, headers = {})
        request('GET', path, nil, headers)
      end

      def post(path, body)
        request('POST', path, body, 'Content-Type' => 'application/json')
      end

      # The Error for an answer the caller cannot use.
      def refused(what, response)
        error = Error.new("hierad: #{urls.join(', ')}: #{what}: HTTP #{response.status}: #{response.error_message}")
        error.status = response.status
        error
      end

      private

      # A 401 to credentials read from files: the files are read again,
      # and if they changed (rotated: the new token written, the old one
      # revoked), the request is sent once more with the new ones.
      # A 429 (this machine's network failed to log in too often, and
      # hierad's throttle did not check the credentials) whose Retry-After
      # is within the read timeout is waited for once: a Puppet run next
      # to a guesser is slowed, not failed. So is a 503 with Retry-After
      # from every server (busy: a memory bound of hierad's is full).
      def request(method, path, body, headers)
        sent = @secrets
        response = request_any(method, path, body, headers)
        if [429, 503].include?(response.status) && (wait = retry_after(response))
          sleep(wait)
          response = request_any(method, path, body, headers)
        end
        return response unless response.status == 401 && rotated?(sent)

        request_any(method, path, body, headers)
      end

      # A 429's or 503's Retry-After in seconds, if worth waiting for.
      def retry_after(response)
        wait = Integer(response.headers['retry-after'].to_s, 10, exception: false)
        wait if wait&.positive? && wait <= @read_timeout
      end

      # Whether the files now hold other credentials than `sent` (then
      # every endpoint sends the new ones; threads that met the 401
      # together change them once).
      def rotated?(sent)
        return false if sent.empty?

        fresh = read_secrets
        return false if fresh == sent

        @mutex.synchronize do
          unless fresh == @secrets
            # The headers first: a request that reads the new @secrets
            # as what it sends must send them.
            auth = headers(@options.merge(fresh))
            @endpoints.each { |e| e.headers = auth }
            @secrets = fresh
          end
        end
        true
      end

      # {token: …} and the like, from the files named (first line).
      def read_secrets
        SECRET_FILES.each_with_object({}) do |(file, value), out|
          path = @options[file]
          next unless path

          line = begin
            # NONBLOCK: a FIFO opens at once, to be refused, instead of
            # holding Puppet's thread until someone writes to it.
            File.open(path.to_s, File::RDONLY | File::NONBLOCK) do |f|
              raise Error, "hierad: #{file} #{path} is not a regular file" unless f.stat.file?

              f.gets
            end.to_s.chomp
          rescue SystemCallError, IOError => e
            raise Error, "hierad: cannot read #{file} #{path}: #{e.message.sub(/ @ .*/m, '')}"
          end
          raise Error, "hierad: #{file} #{path} is empty" if line.empty?

          out[value] = line
        end
      end

      # Tries each URL (from the one that last answered) until one answers
      # with anything but a 5xx; raises Error naming every URL tried, but
      # gives back a 503 with a Retry-After worth waiting for (`request`
      # waits for it once).
      def request_any(method, path, body, headers)
        failures = []
        busy = nil
        start = @preferred
        @endpoints.size.times do |i|
          index = (start + i) % @endpoints.size
          endpoint = @endpoints[index]
          begin
            response = endpoint.request(method, path, body, headers)
          rescue Error => e
            failures << "#{endpoint.url}: #{e.message}"
            next
          end
          if response.status >= 500
            failures << "#{endpoint.url}: HTTP #{response.status}: #{response.error_message}"
            busy ||= response if response.status == 503 && retry_after(response)
            next
          end
          @preferred = index
          return response
        end
        return busy if busy

        raise Error, "hierad: no server answered #{method} #{path} (#{failures.join('; ')})"
      end

      def seconds(options, name)
        value = options[name]
        return DEFAULTS.fetch(name) if value.nil?

        Float(value)
      rescue ArgumentError, TypeError
        raise Error, "hierad: #{name} must be a number of seconds, not #{value.inspect}"
      end

      def headers(options)
        headers = { 'User-Agent' => 'hierad-shim', 'Accept' => 'application/json' }
        if options[:token]
          headers['Authorization'] = "Bearer #{options[:token]}"
        elsif options[:user]
          headers['Authorization'] = "Basic #{["#{options[:user]}:#{options[:password]}"].pack('m0')}"
        end
        headers['X-Auth-Token'] = options[:keystone_token].to_s if options[:keystone_token]
        headers
      end
    end

    # Percent-encoding for URL paths and query strings (no `uri`: loading
    # it costs a one-shot `hiera` run ~20 ms).
    module Escape
      module_function

      # One path segment or query value: all but RFC 3986 unreserved bytes.
      def component(text)
        text.to_s.b.gsub(/[^A-Za-z0-9\-._~]/n) { |c| format('%%%02X', c.ord) }
      end

      # A path whose '/' are kept (resource names contain them).
      def path(text)
        text.to_s.split('/', -1).map { |s| component(s) }.join('/')
      end
    end
  end
end
