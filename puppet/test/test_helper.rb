# Shared by this module's tests: minitest and both modules' lib/ on the
# load path (the upload runs on the hierad module's HTTP client). Run with:
#   ruby -Ipuppet/test -e 'Dir["puppet/test/*_test.rb"].each { |f| require File.expand_path(f) }'
%w[../lib ../../hiera/lib].each { |dir| $LOAD_PATH.unshift(File.expand_path(dir, __dir__)) }
require 'minitest/autorun'
