# The HTTP client of the hierad shim (Net::HTTP): keep-alive sessions
# shared safely between threads, failover over several URLs, timeouts,
# token or Basic credentials, TLS with a CA file.
require 'net/http'
require_relative 'wire'

module PuppetX
  module Hierad
    # One HTTP response: status, headers (lower-case names), body.
    Response = Struct.new(:status, :headers, :body) do
      # The `message` of hierad's JSON error bodies, or the start of the text.
      def error_message
        parsed = JSON.parse(body)
        parsed.is_a?(Hash) && parsed['message'] ? parsed['message'] : body
      rescue JSON::ParserError
        body.strip[0, 300]
      end
    end

    # One server URL and its idle keep-alive Net::HTTP sessions. A thread
    # takes a session for one request, so threads never share a socket.
    class Endpoint
      MAX_IDLE = 8

      attr_reader :url

      def initialize(url, settings)
        uri = begin
          URI.parse(url)
        rescue URI::InvalidURIError
          nil
        end
        unless uri.is_a?(URI::HTTP) && !uri.host.to_s.empty? && [uri.userinfo, uri.query, uri.fragment].none?
          raise Error, "hierad: url #{url.inspect} is not an http:// or https:// URL (http://host:port)"
        end

        @url = url.chomp('/')
        @uri = uri
        @base_path = uri.path.chomp('/')
        @settings = settings
        @idle = []
        @mutex = Mutex.new
      end

      # One request; retried once on a fresh session when a reused one
      # turns out to have been closed by the server meanwhile. Raises Error
      # saying what went wrong.
      def request(method, path, body, headers)
        req = Net::HTTPGenericRequest.new(method, !body.nil?, true, @base_path + path, @settings[:headers].merge(headers))
        req.body = body
        http, reused = checkout
        begin
          res = http.request(req)
        rescue EOFError, Errno::ECONNRESET, Errno::EPIPE
          raise unless reused

          http = start
          res = http.request(req)
        end
        checkin(http)
        Response.new(res.code.to_i, res.each_header.to_h, (+res.body.to_s).force_encoding(Encoding::UTF_8))
      rescue StandardError => e
        raise Error, failure(e)
      end

      private

      def failure(error)
        case error
        when Net::OpenTimeout then "connect timed out after #{@settings[:connect_timeout]}s"
        when Net::ReadTimeout then "read timed out after #{@settings[:read_timeout]}s"
        else error.class.name.start_with?('OpenSSL::') ? "TLS: #{error.message}" : error.message
        end
      end

      def start
        http = Net::HTTP.new(@uri.hostname, @uri.port)
        if @uri.scheme == 'https'
          http.use_ssl = true
          http.cert_store = cert_store
        end
        http.open_timeout = @settings[:connect_timeout]
        http.read_timeout = @settings[:read_timeout]
        # Net::HTTP would retry a GET after a read timeout (twice the wait);
        # `request` retries only a closed keep-alive session, GET or POST.
        http.max_retries = 0
        # Net::HTTP's 2 s would reconnect (a TLS handshake again) after any
        # pause; 30 s is under hierad's --idle-timeout (60 s), and a session
        # the server closed is noticed and replaced anyway.
        http.keep_alive_timeout = 30
        http.start
      end

      # A store of our own: given only a ca_file, OpenSSL would add it to
      # the process-wide default store, which Puppet makes every context use.
      def cert_store
        @cert_store ||= OpenSSL::X509::Store.new.tap do |store|
          @settings[:ca_file] ? store.add_file(@settings[:ca_file]) : store.set_default_paths
        end
      end

      def checkout
        http = @mutex.synchronize { @idle.pop }
        http ? [http, true] : [start, false]
      end

      def checkin(http)
        keep = @mutex.synchronize { @idle.size < MAX_IDLE && @idle.push(http) }
        http.finish unless keep
      end
    end

    # The client of one hierad service: one or more URLs tried in order
    # (the last one that answered first), with credentials and timeouts.
    class Client
      OPTIONS = %i[url token user password ca_file connect_timeout read_timeout].freeze
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

        settings = {
          connect_timeout: seconds(options, :connect_timeout),
          read_timeout: seconds(options, :read_timeout),
          ca_file: options[:ca_file],
          headers: headers(options)
        }
        @endpoints = urls.map { |u| Endpoint.new(u, settings) }
        @urls = @endpoints.map(&:url)
        @preferred = 0
      end

      def get(path, headers = {})
        request('GET', path, nil, headers)
      end

      def post(path, body)
        request('POST', path, body, 'Content-Type' => 'application/json')
      end

      # The Error for an answer the caller cannot use.
      def refused(what, response)
        Error.new("hierad: #{urls.join(', ')}: #{what}: HTTP #{response.status}: #{response.error_message}")
      end

      private

      # Tries each URL (from the one that last answered) until one answers
      # with anything but a 5xx; raises Error naming every URL tried.
      def request(method, path, body, headers)
        failures = []
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
            next
          end
          @preferred = index
          return response
        end
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
        headers
      end
    end

    # Percent-encoding for URL paths and query strings.
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
